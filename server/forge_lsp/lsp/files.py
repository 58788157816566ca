"""The FileStore of the language server: documents open in the editor go through workspace/applyEdit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t

from forge_lsp.lsp import review
from forge_lsp.lsp.textedits import minimal_edits
from forge_lsp.tools.base import ChangedSince, ToolFailure, has_invalid_bytes, read_regular, write_atomic

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

CONFIRM = "confirm"
MAX_REVIEWED_BYTES = 64 * 1024 * 1024
CHANGED_SINCE = "you changed it since"
"""The failureReason of an edit the Neovim plugin did not apply because the buffer changed after the edit was
made (editors/nvim/lua/forge/review.lua): a ChangedSince, so that an undo says the file changed since the turn."""


class EditorFiles:
    """Reads open documents from the editor's buffer and edits them through the client.

    The client applies the edit to its buffer (with undo, and the user saves);
    files that are not open are written to disk atomically. With edit_review =
    "confirm" every edit, open or not, goes to the client for the user's yes
    (lsp.review) and lands only when the client applies it.
    """

    def __init__(self, server: LanguageServer, root: Path | None = None) -> None:
        self.server = server
        self.root = root
        self.edit_review: Callable[[], str] = lambda: "auto"
        """The workspace's edit_review as it is in force (the config may reload between edits)."""

    def _open(self, path: Path) -> t.TextDocumentItem | None:
        uri = path.as_uri()
        docs = self.server.workspace.text_documents
        return docs.get(uri)  # type: ignore[no-any-return]

    def _rel(self, path: Path) -> str:
        if self.root is not None and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return path.name

    async def read_text(self, path: Path) -> str | None:
        doc = self._open(path)
        return doc.source if doc is not None else None  # type: ignore[attr-defined]

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> None:
        doc = self._open(path)
        if self.edit_review() == CONFIRM:
            await self._reviewed_write(path, content, tool, doc)
            return
        if doc is None:
            await asyncio.to_thread(write_atomic, path, content)  # off the event loop: the server keeps answering
            return
        self._agent_edit(path)
        # Only what changed: the editor keeps the cursor, marks, folds and signs of every other line.
        edits = minimal_edits(doc.source, content, doc.position_codec.encoding)  # type: ignore[attr-defined]
        if not edits:
            return
        edit = t.TextDocumentEdit(
            text_document=t.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=doc.version),
            edits=list(edits),
        )
        await self._apply(t.WorkspaceEdit(document_changes=[edit]), path, "Forge", reviewed=False)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        if self.edit_review() != CONFIRM:
            await asyncio.to_thread(path.unlink)
            return
        rel = self._rel(path)
        self._check_can_review(rel, "delete")
        await self._apply(review.delete_file(path.as_uri(), review.label(tool, rel), rel), path, review.label(tool, rel))

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

    async def _reviewed_write(self, path: Path, content: str, tool: str | None, doc: t.TextDocumentItem | None) -> None:
        rel = self._rel(path)
        title = review.label(tool, rel)
        uri = path.as_uri()
        if doc is not None:
            self._check_can_review(rel)
            encoding = doc.position_codec.encoding  # type: ignore[attr-defined]
            edit = review.text_change(uri, doc.version, doc.source, content, title, rel, encoding)  # type: ignore[attr-defined]
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
            return  # nothing changes: nothing to review
        self._agent_edit(path)
        await self._apply(edit, path, title)

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
        if reviewed and not result.failure_reason and version is not None and after is not None and after.version != version:
            # VS Code's client answers a version mismatch as it answers a rejection: applied false, no reason.
            raise ChangedSince(f"{rel} changed in the editor while its edit waited for review; the edit was not applied", rel)
        if reviewed and not result.failure_reason:
            raise ToolFailure(f"the user rejected the edit to {rel}", rel)
        reason = result.failure_reason or "no reason given"
        failure = ChangedSince if reason == CHANGED_SINCE else ToolFailure
        raise failure(f"the editor did not apply the edit to {rel}: {reason}", rel)
