"""edit_review = "confirm" in the core: each change of the agent's file tools is a question in the turn's event
stream (EditReviewAsked), answered by the frontend with its own UI: the editor's workspace/applyEdit with a
change annotation that needs confirmation (the review lands the edit itself), ACP's session/request_permission
with the diff, the terminal's diff and [y/N/a]. The frontends' file stores only read and write; none of them
decides whether an edit is reviewed.

An edit nobody can review is not made: a question no frontend took fails the tool call, as does a denied one
("the user rejected the edit to app.py"). "Allow for this conversation" lets the session's later edits land
unasked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from forge_lsp.core.session import Session, answer_in_task
from forge_lsp.domain.events import Event
from forge_lsp.domain.questions import Answer, EditReviewAsked, Reviewed
from forge_lsp.tools.base import FileStore, ToolFailure, read_regular

log = logging.getLogger(__name__)

CONFIRM = "confirm"
ALL_EDITS = "\0edit_review: every edit"
"""The session's "Allow for this conversation" answer for edits (kept with the conversation's other answers)."""

Review = Callable[[EditReviewAsked], Awaitable[Reviewed]]
"""A frontend's review of one edit: the user's answer (or, where reviewing lands the edit, its outcome)."""


class ReviewedFiles:
    """The session's files, each write and removal first asked about in the event stream when edit_review is
    "confirm" (mode: as it is in force; the config may reload between edits). Everything else is the session's
    FileStore's (reads, the editor's views of its documents)."""

    def __init__(
        self,
        files: FileStore,
        session: Session,
        emit: Callable[[Event], None],
        turn_id: str,
        mode: Callable[[], str],
        root: Path,
        max_bytes: Callable[[], int],
        call_id: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.files = files
        self.session = session
        self.emit = emit
        self.turn_id = turn_id
        self.mode = mode
        self.root = root
        self.max_bytes = max_bytes
        self.call_id = call_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.files, name)

    async def read_text(self, path: Path) -> str | None:
        return await self.files.read_text(path)

    async def before_command(self) -> object:
        return await self.files.before_command()

    async def after_command(self, before: object, tool: str) -> Any:
        return await self.files.after_command(before, tool)

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> str | None:
        if self._reviewed():
            reviewed = await self._review(path, content, tool)
            if reviewed.verdict == "applied":
                return reviewed.note
        return await self.files.write_text(path, content, tool)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        if self._reviewed():
            reviewed = await self._review(path, None, tool)
            if reviewed.verdict == "applied":
                return
        await self.files.delete(path, tool)

    def _reviewed(self) -> bool:
        return self.mode() == CONFIRM and ALL_EDITS not in self.session.allowed

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    async def _old(self, path: Path, rel: str) -> str | None:
        """What path holds now, to show (the frontend's buffer, else the disk); None: new, or too big to show."""
        old = await self.files.read_text(path)
        if old is None and path.is_file():
            try:
                old = await asyncio.to_thread(read_regular, path, rel, self.max_bytes())
            except ToolFailure:
                old = None
        return old

    async def _review(self, path: Path, content: str | None, tool: str | None) -> Reviewed:
        """The frontend's answer; ToolFailure when the edit may not land (denied, nobody to ask, not shown)."""
        rel = self._rel(path)
        answered: asyncio.Future[Reviewed] = asyncio.get_running_loop().create_future()

        def give(reviewed: Reviewed) -> None:
            if not answered.done():
                answered.set_result(reviewed)

        slot = Answer(give)
        old = await self._old(path, rel)
        self.emit(EditReviewAsked(self.turn_id, str(path), rel, old, content, tool, self.call_id(), slot))
        if not slot.taken:
            raise ToolFailure(f'edit_review is "confirm" and nobody can review the edit to {rel} here; nothing was changed', rel)
        try:
            reviewed = await answered
        except asyncio.CancelledError:  # the turn was cancelled while the user was reviewing
            slot.withdraw()
            raise
        if reviewed.failure is not None:
            raise reviewed.failure
        if reviewed.verdict == "always":
            self.session.allowed.add(ALL_EDITS)
        elif reviewed.verdict not in ("allow", "applied"):
            raise ToolFailure(f"the user rejected the edit to {rel}", rel)
        return reviewed


def answer_review(question: EditReviewAsked, review: Review) -> None:
    """A frontend answers an edit's review with review, in a task of its own (the user may take a while). A
    ToolFailure it raises is the edit's failure; any other error is "deny" (a client that cannot answer means no).
    The task is cancelled if the question is withdrawn. A frontend that reviews later than the event reaches it
    (in its turn among the updates it sends) takes the question first, as the event reaches it."""
    if question.answer is None:
        return

    async def reviewed() -> Reviewed:
        try:
            return await review(question)
        except ToolFailure as exc:
            return Reviewed("failed", failure=exc)
        except Exception as exc:
            log.warning("could not ask the user about the edit to %s (%s); not applied", question.rel, exc)
            return Reviewed("deny")

    answer_in_task(question.answer, reviewed)


def nobody_reviews(question: EditReviewAsked, why: str) -> None:
    """A frontend that takes the question but cannot show it: the edit fails with why."""
    if question.answer is not None:
        question.answer.take()(Reviewed("failed", failure=ToolFailure(why, question.rel)))
