"""The questions a turn asks its frontend, as events in the turn's one stream: the frontend that answers a question
takes its answer slot as the event reaches it and gives the answer once the user gave it; a question nobody took
is one nobody can answer (forge-lsp run without a terminal). Ordered with the other events, a question comes
after the tool call it is about was announced, in every frontend, without a handshake of their own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from forge_lsp.domain.events import Event


class Answer:
    """A question's answer slot: take() says this frontend answers it and returns where the answer goes."""

    def __init__(self, give: Callable[[str], None]) -> None:
        self._give = give
        self.taken = False
        self._stop: Callable[[], None] | None = None

    def take(self) -> Callable[[str], None]:
        self.taken = True
        return self._give

    def on_withdrawn(self, stop: Callable[[], None]) -> None:
        """What stops the frontend's asking when the question is withdrawn (its turn cancelled meanwhile)."""
        self._stop = stop

    def withdraw(self) -> None:
        if self._stop is not None:
            self._stop()


@dataclass(frozen=True)
class PermissionAsked(Event):
    """A confirm rule matched in tool call call_id: the answer is "allow", "always" (for this conversation) or
    "deny". Answered by the frontend; not a forge/event notification (the editor asks through its own UI)."""

    tool: str = ""
    question: str = ""
    call_id: str | None = None
    answer: Answer | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "permissionAsked"

    def payload(self) -> dict[str, Any]:
        return {"tool": self.tool, "question": self.question, "callId": self.call_id}
