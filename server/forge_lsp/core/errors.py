"""Why a turn or a command cannot start: cheap to import, so every frontend imports it at the top.

Each frontend renders these its own way (a JSON-RPC error, an ACP stop, one line and an exit code).
"""

from __future__ import annotations

MAX_PROMPT_CHARS = 200_000


class TurnInProgress(Exception):
    """A turn is already running in this workspace."""


class NoModel(ValueError):
    """No model is set anywhere: the turn cannot start (there is no silent cloud default)."""


class UnknownAgent(ValueError):
    """An agent id that no agent has (built-in, the user's or the workspace's)."""


class BadPrompt(ValueError):
    """A prompt no turn can run: not a string, empty, or over MAX_PROMPT_CHARS."""


class EmptyPrompt(BadPrompt):
    """The prompt is empty or only whitespace (each frontend says what to type instead)."""


def check_prompt(prompt: object) -> str:
    """The prompt, if a turn can run it; EmptyPrompt or BadPrompt saying why not."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise EmptyPrompt("prompt must be a non-empty string")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise BadPrompt(f"prompt is {len(prompt)} characters, over the {MAX_PROMPT_CHARS}-character limit")
    return prompt
