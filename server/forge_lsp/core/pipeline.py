"""The one prompt pipeline: every frontend hands the core a PromptRequest and gets the turn's events.

A prompt goes through the same steps whoever sends it (the language server's forge.run, an ACP
session/prompt, `forge-lsp run`): the prompt is checked, a "/name args" is expanded to its command's prompt,
the agent and the model are picked (the request's, else the command's, else the conversation's and the
config's, the config files as they are on disk now), the workspace must have no turn running, and the turn runs
under the workspace's lock (core/turn.py). The frontends only translate: the request from their protocol, the
errors and events to it.

accept() takes the steps that can refuse at once (before a frontend spends anything on the turn: progress,
its editor's context, MCP servers); run() runs the accepted prompt. Cheap to import: the language server's
handlers import it at the top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forge_lsp.core.errors import BadPrompt, TurnInProgress, check_prompt

if TYPE_CHECKING:
    from forge_lsp.core.commands import Expansion
    from forge_lsp.core.orchestrator import Emit
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.core.session import Session
    from forge_lsp.domain.events import TurnSummary


class TurnRunning(TurnInProgress):
    """A turn runs in the workspace the prompt is for: root and turn_id for the frontend's own words."""

    def __init__(self, root: Path, turn_id: str | None) -> None:
        super().__init__(f"a turn is already running in this workspace ({turn_id}); cancel it first")
        self.root = root
        self.turn_id = turn_id


class ArgsWithoutCommand(BadPrompt):
    """Arguments given apart from a prompt that is not a /command (`forge-lsp run fix the test`)."""


@dataclass(frozen=True)
class PromptRequest:
    """One prompt as a frontend hands it to the core.

    prompt: the user's words ("/name args" runs that command; "//name" sends "/name" as it is); attached: what
    comes with them, after the command's prompt (the editor's selection, an ACP prompt's further blocks);
    context: what the prompt carries from the editor ({file?, range?, unsaved?}: the transcript, turnStarted);
    session: the conversation's session (None: the workspace's own)."""

    prompt: str
    model: str | None = None
    agent: str | None = None
    attached: str = ""
    context: Mapping[str, Any] | None = None
    session: Session | None = None
    turn_id: str | None = None

    @property
    def text(self) -> str:
        """The prompt and what is attached, as the user sent them (before a command is expanded)."""
        return "\n\n".join(part for part in (self.prompt, self.attached) if part)


@dataclass(frozen=True)
class Accepted:
    """A prompt the core accepted: its command expanded, ready to run."""

    request: PromptRequest
    expansion: Expansion

    @property
    def prompt(self) -> str:
        """What the model is sent: the command's prompt (or the prompt), then what is attached."""
        return _then(self.expansion.prompt, self.request.attached)

    @property
    def model(self) -> str | None:
        """The request's model, else the command's (None: the agent's or the config's, picked as the turn starts)."""
        return self.request.model or self.expansion.model

    @property
    def agent(self) -> str | None:
        """The request's agent, else the command's (None: the conversation's)."""
        return self.request.agent or self.expansion.agent

    def attach(self, attached: str, context: Mapping[str, Any] | None = None) -> Accepted:
        """The same prompt with what the frontend found after accepting it (the editor's context of the turn)."""
        joined = _then(self.request.attached, attached) if self.request.attached else attached
        return replace(self, request=replace(self.request, attached=joined, context=context))


def _then(text: str, attached: str) -> str:
    """text, then what is attached after an empty line."""
    return f"{text}\n\n{attached}" if attached else text


def accept(runtime: WorkspaceRuntime, request: PromptRequest) -> Accepted:
    """The steps that refuse a prompt at once, in order: the prompt (BadPrompt, EmptyPrompt), the agent asked for
    (UnknownAgent), a turn running in the workspace (TurnRunning), the /command (UnknownCommand, BadPrompt). The
    definitions are those on disk: a config, agent or command file saved a moment ago is read first."""
    check_prompt(request.text)
    runtime.refresh_files()
    if request.agent is not None:
        runtime.agent(request.agent)
    if runtime.running:
        raise TurnRunning(runtime.root, runtime.turn_id)
    return Accepted(request, runtime.expand_command(request.prompt))


async def run(runtime: WorkspaceRuntime, accepted: Accepted, emit: Emit) -> TurnSummary:
    """Run an accepted prompt to its end, each event to emit as it happens, in order.

    TurnInProgress when a turn started meanwhile (here or in another process) or one is being undone;
    BadPrompt for the prompt with what was attached; NoModel; UnknownAgent (the command's agent)."""
    request = accepted.request
    return await runtime.turns.run(
        accepted.prompt,
        emit,
        accepted.model,
        request.turn_id,
        session=request.session,
        context=request.context,
        agent=accepted.agent,
    )


def with_args(prompt: str, args: list[str]) -> str:
    """`forge-lsp run /name ARG...`: the command and its arguments as one prompt; ArgsWithoutCommand for
    arguments after a prompt that is not a /command."""
    from forge_lsp.core.commands import split_invocation

    if split_invocation(prompt) is None:
        raise ArgsWithoutCommand(f"{prompt!r} is not a /command: it takes no arguments")
    return " ".join([prompt, *args])
