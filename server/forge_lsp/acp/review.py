"""edit_review = "confirm" in ACP: each write, patch, remove and undo of the agent asked about first.

The core asks (core/edit_review.py: an EditReviewAsked in the turn's events); here it becomes
session/request_permission about the tool call making the change (its toolCallId: asked from the pump, in
order, after its tool_call was sent), with the change as the call's content (a diff: path, oldText,
newText; a removal's newText is empty) and the options of a confirm rule: Allow (this edit), Allow for this
conversation (every later edit of the session's conversation), Deny. No answer, a cancelled request or a
client error is Deny: the tool fails ("the user rejected the edit to app.py") and nothing is written. It asks
whether or not the client offers fs/write_text_file: a client's own review of a write (if it has one) is not
forge-lsp's to count on, and a removal never goes through it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from acp.helpers import tool_diff_content
from acp.schema import ToolCallLocation, ToolCallUpdate

from forge_lsp.acp.conversions import ALLOW_ALWAYS, ALLOW_ONCE, PERMISSION_OPTIONS
from forge_lsp.domain.questions import EditReviewAsked, Reviewed
from forge_lsp.redact import redact
from forge_lsp.tools.base import ToolFailure, for_display

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger(__name__)


async def review(conn: Client | None, session_id: str, asked: EditReviewAsked) -> Reviewed:
    """The client's answer about one edit of the session (conn None: no client to ask, the edit fails)."""
    rel = asked.rel
    if conn is None:
        raise ToolFailure(
            f'edit_review is "confirm" and the client cannot be asked about the edit to {rel}; nothing was changed', rel
        )
    removes = asked.new is None
    verb = "Remove" if removes else "Apply the edit to"
    call = ToolCallUpdate(
        tool_call_id=asked.call_id or "forge-edit-review",
        title=f"{verb} {rel} ({asked.tool or 'edit'})?",
        kind="delete" if removes else "edit",
        content=[tool_diff_content(asked.path, _shown(asked.new or ""), _shown(asked.old) if asked.old is not None else None)],
        locations=[ToolCallLocation(path=asked.path)],
    )
    try:
        response = await conn.request_permission(session_id=session_id, tool_call=call, options=PERMISSION_OPTIONS)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
    except Exception as exc:  # a client that cannot answer means no
        log.warning("session/request_permission for the edit to %s failed (%s); not applied", rel, exc)
        chosen = None
    return Reviewed({ALLOW_ONCE: "allow", ALLOW_ALWAYS: "always"}.get(chosen or "", "deny"))


def _shown(text: str) -> str:
    """File text as the client may show it: bytes that are not UTF-8 as U+FFFD, secrets redacted."""
    return redact(for_display(text))
