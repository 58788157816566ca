"""What a turn policy sees of the turn, and the points of the loop where it is asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol


class TurnView(Protocol):
    """The running turn as a hook reads it."""

    @property
    def signatures(self) -> Sequence[tuple[str, str]]:
        """(tool name, arguments) of the latest tool calls of the conversation, oldest first."""
        ...


class TurnHook:
    """One turn policy. A hook lives for one turn (its state is that turn's); each method may return
    a reminder, which the orchestrator adds to the conversation as a <system_reminder> user message."""

    kind: ClassVar[str] = ""
    """The reminder's kind on the wire (a reminder event's kind: domain/events.REMINDER_KINDS)."""

    def before_request(self, turn: TurnView) -> str | None:
        """Before each model request."""
        return None

    def on_answer(self, turn: TurnView) -> str | None:
        """The model answered without a tool call: a reminder keeps the turn going instead of ending it."""
        return None
