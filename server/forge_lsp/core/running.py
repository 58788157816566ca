"""What a running turn is doing now (a tool call, or waiting on the model), and so what cancelling it stops.

forge.cancel answers with it, so that an editor says what was stopped from the server's knowledge, not from
the events it happened to have seen (a client that missed toolCallStarted said "turn cancelled" over a shell
command it then did not know was killed; one that had seen it said so even when the call had just ended).
"""

from __future__ import annotations

from forge_lsp.domain.events import Event, ToolCallFinished, ToolCallStarted, TurnFinished, TurnStarted
from forge_lsp.domain.hooks import Hook

SHOWN_COMMAND_CHARS = 60
"""Of a shell command named in what cancelling stopped."""


class RunningCall:
    """The tool call the workspace's turn runs now; None while the model is asked (or no turn runs)."""

    def __init__(self) -> None:
        self.call: ToolCallStarted | None = None
        self.hook: Hook | None = None
        """The user's hook running now (before or after self.call, or at the turn's end), if one is."""

    def see(self, event: Event) -> None:
        """Follow the turn's events."""
        if isinstance(event, ToolCallStarted):
            self.call = event
        elif isinstance(event, ToolCallFinished | TurnStarted | TurnFinished):
            self.call = None
        if isinstance(event, TurnStarted | TurnFinished):
            self.hook = None

    def hook_running(self, hook: Hook | None) -> None:
        """A hook started (or, None, ended): core/user_hooks.py tells it."""
        self.hook = hook

    def stopped(self) -> str:
        """What cancelling the turn now stops, as the end of "turn cancelled; ...": the shell command killed
        (its process group), another tool's call, or the model's reply."""
        call = self.call
        if self.hook is not None:
            what = f" for the {call.tool} call" if call is not None else ""
            return f"the running {self.hook.event} hook{what} was killed ({self.hook.label()})"
        if call is None:
            return "the model's reply was stopped"
        if call.kind == "execute":
            command = call.title.split(": ", 1)[-1].strip() if call.title else ""
            if len(command) > SHOWN_COMMAND_CHARS:
                command = command[: SHOWN_COMMAND_CHARS - 1] + "…"
            return f"the running shell command was killed ({command})" if command else "the running shell command was killed"
        return f"the running {call.tool} call was stopped"
