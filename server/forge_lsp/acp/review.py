"""edit_review = "confirm" in ACP: each write, patch, remove and undo of the agent asked about first.

ACP has no workspace edit to preview: the question is session/request_permission about the tool call
making the change (its toolCallId, sent after its tool_call), with the change as the call's content (a
diff: path, oldText, newText; a removal's newText is empty) and the options of a confirm rule: Allow
(this edit), Allow for this conversation (every later edit of the session's conversation), Deny. No
answer, a cancelled request or a client error is Deny: the tool fails ("the user rejected the edit to
app.py") and nothing is written. It asks whether or not the client offers fs/write_text_file: a client's
own review of a write (if it has one) is not forge-lsp's to count on, and a removal never goes through it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from acp.helpers import tool_diff_content
from acp.schema import ToolCallLocation, ToolCallUpdate

from forge_lsp.acp.conversions import ALLOW_ALWAYS, ALLOW_ONCE, PERMISSION_OPTIONS
from forge_lsp.domain.events import Event, ToolCallFinished, ToolCallStarted
from forge_lsp.redact import redact
from forge_lsp.tools.base import ToolFailure, for_display, read_regular

if TYPE_CHECKING:
    from forge_lsp.acp.agent import ForgeAgent
    from forge_lsp.acp.session import AcpSession

log = logging.getLogger(__name__)

CONFIRM = "confirm"
ALL_EDITS = "\0edit_review: every edit"
"""The session's "Allow for this conversation" answer for edits (kept with the conversation's other answers)."""
ANNOUNCE_WAIT_S = 30.0


class EditReview:
    """Asks the ACP client about each change of one session's files when edit_review is "confirm"."""

    def __init__(self, session: AcpSession, edit_review: Callable[[], str], max_bytes: Callable[[], int]) -> None:
        self.session = session
        self.edit_review = edit_review
        self.max_bytes = max_bytes
        self.agent: ForgeAgent | None = None
        """The agent whose connection asks (set when the session is adopted)."""
        self.running: str | None = None
        """The session's tool call running now: set as its ToolCallStarted is emitted (the pump sends it later)."""

    def emitted(self, event: Event) -> None:
        """Told each event of the session's turn as it is emitted."""
        if isinstance(event, ToolCallStarted):
            self.running = event.call_id
        elif isinstance(event, ToolCallFinished) and event.call_id == self.running:
            self.running = None

    async def check(
        self, path: Path, content: str | None, tool: str | None, buffered: Callable[[Path], Awaitable[str | None]]
    ) -> None:
        """Return when the change may land (review off, or the user allowed it); ToolFailure when it may not.
        content None: path is removed. buffered: the client's text of path, when it has one."""
        if self.edit_review() != CONFIRM:
            return
        session = self.session
        rel = _relative(path, session.root)
        if ALL_EDITS in session.core.allowed:
            return
        conn = self.agent.conn if self.agent is not None else None
        if conn is None:
            raise ToolFailure(
                f'edit_review is "confirm" and the client cannot be asked about the edit to {rel}; nothing was changed', rel
            )
        old = await buffered(path)
        if old is None and path.is_file():
            try:
                old = await asyncio.to_thread(read_regular, path, rel, self.max_bytes())
            except ToolFailure:
                old = None
        call_id = self.running
        await _announced(session, call_id)
        verb = "Remove" if content is None else "Apply the edit to"
        call = ToolCallUpdate(
            tool_call_id=call_id or "forge-edit-review",
            title=f"{verb} {rel} ({tool or 'edit'})?",
            kind="delete" if content is None else "edit",
            content=[tool_diff_content(str(path), _shown(content or ""), _shown(old) if old is not None else None)],
            locations=[ToolCallLocation(path=str(path))],
        )
        try:
            response = await conn.request_permission(session_id=session.id, tool_call=call, options=PERMISSION_OPTIONS)
            outcome = response.outcome
            chosen = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
        except Exception as exc:  # a client that cannot answer means no
            log.warning("session/request_permission for the edit to %s failed (%s); not applied", rel, exc)
            chosen = None
        if chosen == ALLOW_ALWAYS:
            session.core.allowed.add(ALL_EDITS)
        elif chosen != ALLOW_ONCE:
            raise ToolFailure(f"the user rejected the edit to {rel}", rel)


def _shown(text: str) -> str:
    """File text as the client may show it: bytes that are not UTF-8 as U+FFFD, secrets redacted."""
    return redact(for_display(text))


def _relative(path: Path, root: Path) -> str:
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return str(path)


async def _announced(session: AcpSession, call_id: str | None) -> None:
    """Wait (bounded) until the client was sent the call's tool_call: the question is about a call it shows."""
    if call_id is None:
        return
    try:
        await asyncio.wait_for(session.announced.setdefault(call_id, asyncio.Event()).wait(), ANNOUNCE_WAIT_S)
    except TimeoutError:
        log.warning("tool call %s was not announced in %s s; asking about its edit anyway", call_id, ANNOUNCE_WAIT_S)
