"""The FileStore of the language server: documents open in the editor go through workspace/applyEdit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as t

from forge_lsp.lsp.textedits import minimal_edits
from forge_lsp.tools.base import ToolFailure, write_atomic

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class EditorFiles:
    """Reads open documents from the editor's buffer and edits them through the client.

    The client applies the edit to its buffer (with undo, and the user saves);
    files that are not open are written to disk atomically.
    """

    def __init__(self, server: LanguageServer) -> None:
        self.server = server

    def _open(self, path: Path) -> t.TextDocumentItem | None:
        uri = path.as_uri()
        docs = self.server.workspace.text_documents
        return docs.get(uri)  # type: ignore[no-any-return]

    async def read_text(self, path: Path) -> str | None:
        doc = self._open(path)
        return doc.source if doc is not None else None  # type: ignore[attr-defined]

    async def write_text(self, path: Path, content: str) -> None:
        doc = self._open(path)
        if doc is None:
            await asyncio.to_thread(write_atomic, path, content)  # off the event loop: the server keeps answering
            return
        saves = getattr(self.server, "user_saves", None)
        if saves is not None:  # the user saving this buffer next does not make it theirs (trust)
            saves.agent_edit(path.as_uri())
        # Only what changed: the editor keeps the cursor, marks, folds and signs of every other line.
        edits = minimal_edits(doc.source, content, doc.position_codec.encoding)  # type: ignore[attr-defined]
        if not edits:
            return
        edit = t.TextDocumentEdit(
            text_document=t.OptionalVersionedTextDocumentIdentifier(uri=path.as_uri(), version=doc.version),
            edits=list(edits),
        )
        result = await self.server.workspace_apply_edit_async(
            t.ApplyWorkspaceEditParams(edit=t.WorkspaceEdit(document_changes=[edit]), label="Forge")
        )
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            raise ToolFailure(f"the editor did not apply the edit to {path.name}: {reason}", path.name)

    async def delete(self, path: Path) -> None:
        await asyncio.to_thread(path.unlink)
