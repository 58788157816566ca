"""The FileStore of the language server: documents open in the editor go through workspace/applyEdit."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from forge_lsp.domain.questions import EditReviewAsked, Reviewed
from forge_lsp.lsp import review
from forge_lsp.lsp.agent_saves import CHANGED_SINCE, REPORT_SECS, AgentSaves, same_text
from forge_lsp.lsp.outside_changes import OutsideChanges, Seen
from forge_lsp.lsp.textedits import minimal_edits
from forge_lsp.tools.base import (
    ChangedInReview,
    ChangedSince,
    Followed,
    ToolFailure,
    has_invalid_bytes,
    read_regular,
    write_atomic,
)

if TYPE_CHECKING:
    from forge_lsp.lsp.language_server import ForgeLanguageServer

MAX_REVIEWED_BYTES = 64 * 1024 * 1024


@dataclass
class _Pending:
    """An edit the client applied but has not reported yet (its didChange comes later: Neovim's debounce)."""

    doc: Any
    """The document the edit was made to (pygls makes a new one when the client opens it again)."""
    text: str
    """What the edit made of it."""
    since: float = field(default_factory=time.monotonic)


class EditorFiles:
    """Reads open documents from the editor's buffer and edits them through the client.

    The client applies the edit to its buffer (with undo), and the disk gets the new text before the
    turn's next tool call: the client saves the document, or the server writes it (lsp/agent_saves.py),
    unless the buffer holds unsaved changes of the user's. Files that are not open are written to disk
    atomically. With edit_review = "confirm" the core asks before every edit, open or not (core/edit_review.py):
    review() sends it to the client for the user's yes (lsp.review), and it lands only when the client applies it.

    Until the client reports an edit it applied (didChange), reads get the edit's result, and the next
    edit of that document waits for the report: never the text from before the server's own edit.

    After a command that may change any file (the shell, an MCP tool), the open documents it changed on
    disk follow the disk (lsp/outside_changes.py): reloaded in the editor, or read from the disk.
    """

    def __init__(self, server: ForgeLanguageServer, root: Path | None = None) -> None:
        self.server = server
        self.root = root
        self.saves = AgentSaves(server)
        self.outside = OutsideChanges(self)
        self._pending: dict[str, _Pending] = {}
        # Each change the client reports: an edit it holds all of is reported (what the user types next is theirs).
        server.document_changes.listen(self._changed)

    def _open(self, path: Path) -> Any:
        return self.server.workspace.text_documents.get(path.as_uri())

    def _rel(self, path: Path) -> str:
        if self.root is not None and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return path.name

    def _changed(self, uri: str) -> None:
        pending = self._pending.get(uri)
        doc = self.server.workspace.text_documents.get(uri)
        if pending is not None and (doc is None or doc is not pending.doc or same_text(doc.source, pending.text)):
            del self._pending[uri]

    def _unreported(self, path: Path) -> _Pending | None:
        """The edit of path's document the client applied and has not reported (all of) yet, or None."""
        uri = path.as_uri()
        pending = self._pending.get(uri)
        if pending is None:
            return None
        doc = self._open(path)
        if doc is None or doc is not pending.doc or same_text(doc.source, pending.text):
            del self._pending[uri]  # reported, or the document closed
            return None
        if time.monotonic() - pending.since >= REPORT_SECS:
            del self._pending[uri]  # a change of the user's came over it: the document is the truth
            return None
        return pending

    async def read_text(self, path: Path) -> str | None:
        pending = self._unreported(path)
        if pending is not None:
            return pending.text
        view = self.outside.view(path.as_uri())
        if view is not None:
            return view.text  # the editor did not reload it: the disk's (None: removed, so the disk says so)
        doc = self._open(path)
        return doc.source if doc is not None else None

    async def view_text(self, path: Path) -> str | None:
        """read_text, once the client reported the server's last edit of path (or the user typed over it)."""
        try:
            await self._reported(path)
        except ChangedSince:
            pass  # the user's text stands: it is the document's now
        return await self.read_text(path)

    async def before_command(self) -> dict[str, Seen]:
        return await self.outside.before()

    async def after_command(self, before: object, tool: str) -> tuple[list[Followed], list[str]]:
        return await self.outside.after(before if isinstance(before, dict) else {}, tool)

    async def _clean(self, path: Path, text: str) -> bool:
        """Whether a document's buffer holds what the disk holds: saving it loses nothing of the user's. A
        buffer the editor did not reload after a command changed its file holds the disk's earlier text."""
        return self.outside.view(path.as_uri()) is not None or await self.saves.clean(path, text)

    async def _reported(self, path: Path) -> Any:
        """path's open document (or None) once the client reported the server's last edit of it: the next
        edit is made against the client's text and version. ChangedSince when the user changed it meanwhile:
        the new content was made from the edit's text, and would undo what they typed."""
        pending = self._unreported(path)
        if pending is not None:
            await self.server.document_changes.until(path.as_uri(), lambda: self._unreported(path) is None, REPORT_SECS)
            doc = self._open(path)
            if doc is pending.doc and not same_text(doc.source, pending.text):
                rel = self._rel(path)
                raise ChangedSince(f"{rel} changed in the editor since the last edit; nothing was changed: read it again", rel)
        return self._open(path)

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> str | None:
        doc = await self._reported(path)
        if doc is None:
            await asyncio.to_thread(write_atomic, path, content)  # off the event loop: the server keeps answering
            return None
        # The document as it is now: it changes under us when the client reports a change (the user typing
        # while the disk is read: then the client refuses the edit, made for this version).
        text, version = doc.source, doc.version
        clean = await self._clean(path, text)
        self._agent_edit(path)
        # Only what changed: the editor keeps the cursor, marks, folds and signs of every other line.
        edits = minimal_edits(text, content, doc.position_codec.encoding)
        if edits:
            edit = t.TextDocumentEdit(
                text_document=t.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
                edits=list(edits),
            )
            await self._apply(t.WorkspaceEdit(document_changes=[edit]), path, "Forge", reviewed=False)
        return await self._landed(path, content, doc, version, clean, bool(edits))

    async def _landed(
        self, path: Path, content: str, doc: Any, version: int | None, clean: bool, applied: bool = True
    ) -> str | None:
        """The client applied an edit that makes path hold content (doc: its document then, at version; None
        when not open): the disk gets it (lsp/agent_saves.py); the note for the model when it does not."""
        uri = path.as_uri()
        if applied and doc is not None and not (self._open(path) is doc and same_text(doc.source, content)):
            self._pending[uri] = _Pending(doc, content)  # not reported yet (VS Code's report comes before the answer)
        return await self.saves.settle(path, uri, self._rel(path), content, doc, version, clean)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        await asyncio.to_thread(path.unlink)

    async def review(self, asked: EditReviewAsked) -> Reviewed:
        """An edit the core asks about (edit_review = "confirm"), as one workspace/applyEdit the client shows for
        review: applied when the user accepted it (with the note for the model when it did not reach the disk);
        ToolFailure when rejected, when the client cannot show it, or when the file changed meanwhile."""
        path = Path(asked.path)
        if asked.new is None:
            rel = self._rel(path)
            self._check_can_review(rel, "delete")
            title = review.label(asked.tool, rel)
            await self._apply(review.delete_file(path.as_uri(), title, rel), path, title)
            return Reviewed("applied")
        doc = await self._reported(path)
        return Reviewed("applied", await self._reviewed_write(path, asked.new, asked.tool, doc))

    def _agent_edit(self, path: Path) -> None:
        saves = getattr(self.server, "user_saves", None)
        if saves is not None:  # the user saving this buffer next does not make it theirs (trust)
            saves.agent_edit(path.as_uri())

    def _check_can_review(self, rel: str, resource: str | None = None) -> None:
        why = review.cannot_review(self.server.client_capabilities, resource)
        if why is not None:
            raise ToolFailure(
                f'edit_review is "confirm" but this editor cannot review the edit to {rel}: {why}; nothing was changed', rel
            )

    async def _reviewed_write(self, path: Path, content: str, tool: str | None, doc: Any) -> str | None:
        rel = self._rel(path)
        title = review.label(tool, rel)
        uri = path.as_uri()
        clean = True  # a file the editor has not opened: nothing of the user's is unsaved
        version = doc.version if doc is not None else None
        if doc is not None:
            self._check_can_review(rel)
            encoding = doc.position_codec.encoding
            text = doc.source
            clean = await self._clean(path, text)
            edit = review.text_change(uri, version, text, content, title, rel, encoding)
        elif path.exists():
            self._check_can_review(rel)
            old = await asyncio.to_thread(read_regular, path, rel, MAX_REVIEWED_BYTES)
            self._check_utf8(old + content, rel)
            edit = review.text_change(uri, None, old, content, title, rel)
        else:
            self._check_can_review(rel, "create")
            self._check_utf8(content, rel)
            edit = review.create_file(uri, content, title, rel)
        if edit.document_changes and all(isinstance(c, t.TextDocumentEdit) and not c.edits for c in edit.document_changes):
            return await self._landed(path, content, doc, version, clean, applied=False)  # nothing to review
        self._agent_edit(path)
        await self._apply(edit, path, title)
        return await self._landed(path, content, doc, version, clean)

    @staticmethod
    def _check_utf8(text: str, rel: str) -> None:
        if has_invalid_bytes(text):
            raise ToolFailure(f"{rel} holds bytes that are not UTF-8: an editor cannot show the edit for review", rel)

    async def _apply(self, edit: t.WorkspaceEdit, path: Path, title: str, reviewed: bool = True) -> None:
        rel = self._rel(path)
        before = self._open(path)
        version = before.version if before is not None else None
        result = await self.server.workspace_apply_edit_async(t.ApplyWorkspaceEditParams(edit=edit, label=title))
        if result.applied:
            return
        after = self._open(path)
        if not result.failure_reason and version is not None and after is not None and after.version != version:
            # VS Code's client answers a version mismatch as it answers a rejection: applied false, no reason.
            if reviewed:
                raise ChangedInReview(
                    f"{rel} changed in the editor while its edit waited for review; the edit was not applied", rel
                )
            raise ChangedSince(f"the editor did not apply the edit to {rel}: {CHANGED_SINCE}", rel)
        if reviewed and not result.failure_reason:
            raise ToolFailure(f"the user rejected the edit to {rel}", rel)
        reason = result.failure_reason or "no reason given"
        failure = ToolFailure if reason != CHANGED_SINCE else ChangedInReview if reviewed else ChangedSince
        made_for = _version_of(edit, path)
        if failure is ChangedSince and made_for is not None:
            # The user's typing, which the client may report later (Neovim: up to 150 ms): the edit is made again
            # on it (tools/patch.py), so it waits for that report, as long as for the report of an edit.
            await self.server.document_changes.until(
                path.as_uri(), lambda: getattr(self._open(path), "version", None) != made_for, REPORT_SECS
            )
        raise failure(f"the editor did not apply the edit to {rel}: {reason}", rel)


def _version_of(edit: t.WorkspaceEdit, path: Path) -> int | None:
    """The document version an edit of path was made for (None: none named)."""
    for change in edit.document_changes or []:
        if isinstance(change, t.TextDocumentEdit) and change.text_document.uri == path.as_uri():
            return change.text_document.version
    return None
