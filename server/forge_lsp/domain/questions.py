"""The questions a turn asks its frontend, as events in the turn's one stream: a confirm rule's (PermissionAsked) and
an edit's review (EditReviewAsked, edit_review = "confirm"). The frontend that answers a question takes its answer
slot as the event reaches it and gives the answer once the user gave it; a question nobody took is one nobody can
answer (forge-lsp run without a terminal). Ordered with the other events, a question comes after the tool call it
is about was announced, in every frontend, without a handshake of their own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from forge_lsp.domain.events import Event


class Answer:
    """A question's answer slot: take() says this frontend answers it and returns where the answer goes."""

    def __init__(self, give: Callable[[Any], None]) -> None:
        self._give = give
        self.taken = False
        self._stop: Callable[[], None] | None = None

    def take(self) -> Callable[[Any], None]:
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


@dataclass(frozen=True)
class Reviewed:
    """The answer to an EditReviewAsked. verdict: "allow" (this edit), "always" (every later edit of the
    conversation), "deny"; or "applied": the frontend's review landed the edit itself (the editor applied the
    WorkspaceEdit the user accepted), note: what the model is told when it did not reach the disk. failure: the
    edit was not made, and why (the editor could not show it, the user changed the file meanwhile): the tool's."""

    verdict: str
    note: str | None = None
    failure: Exception | None = None


@dataclass(frozen=True)
class EditReviewAsked(Event):
    """edit_review = "confirm": a change of the agent's file tools waits for the user's yes. path: the file
    (absolute), rel: as the user reads it; old: its text now (None: a new file, or one that cannot be shown), new:
    what the edit makes of it (None: the file is removed); tool: the tool making it (None: outside a turn,
    forge.undoTurn); call_id: its tool call. Answered with a Reviewed; not a forge/event notification."""

    path: str = ""
    rel: str = ""
    old: str | None = field(default=None, repr=False)
    new: str | None = field(default=None, repr=False)
    tool: str | None = None
    call_id: str | None = None
    answer: Answer | None = field(default=None, compare=False, repr=False)
    type: ClassVar[str] = "editReviewAsked"

    def payload(self) -> dict[str, Any]:
        return {"path": self.rel, "tool": self.tool, "callId": self.call_id, "removes": self.new is None}
