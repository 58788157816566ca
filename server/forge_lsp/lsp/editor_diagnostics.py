"""The editor's diagnostics of a file, asked of the client: the language server's DiagnosticsPort (core/editor_check.py).

A client that says it can (experimental capability ``forge.diagnostics``: the VS Code extension, the Neovim plugin)
answers the request ``forge/diagnostics {documents: [{uri, version}], waitMs}`` with one
``{uri, diagnostics, caughtUp}`` per document: every diagnostic its own language servers (and linters) have for
the document, never forge-lsp's own, once they are current for the document at ``version`` (they changed after the
document reached it, or a quiet period passed with none coming), at most ``waitMs`` (``caughtUp: false`` when that
ran out). A document the editor does not have open is opened without being shown, so its language servers see it.

Before the turn's first edit of a file: ``waitMs`` 0 when it is open (what the editor has now), else the wait for
the language servers' first report on it; after each edit: ``waitMs`` is ``[verify] wait_ms``. A client without the
capability is said once (the log, forge.status); nothing is checked then.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from forge_lsp.domain.problems import MAX_DIAGNOSTICS, EditorReport, from_lsp

if TYPE_CHECKING:
    from forge_lsp.lsp.language_server import ForgeLanguageServer

log = logging.getLogger(__name__)

DIAGNOSTICS = "forge/diagnostics"
"""Server to client: {documents: [{uri, version}], waitMs} -> [{uri, diagnostics: Diagnostic[], caughtUp}]."""
GRACE_SECS = 5.0
"""How much longer than waitMs the server waits for the answer (the client's own load of a file, a busy editor)."""
CANNOT = "this editor does not answer forge/diagnostics (the Forge VS Code extension and Neovim plugin do)"
TOLD = "forge-lsp: {why}, so the agent's edits are not checked against its diagnostics ([verify] diagnostics)"


def can_report(caps: t.ClientCapabilities | None) -> bool:
    """Whether the client implements forge/diagnostics (experimental: {forge: {diagnostics: true}})."""
    experimental = caps.experimental if caps is not None else None
    forge = experimental.get("forge") if isinstance(experimental, Mapping) else None
    return isinstance(forge, Mapping) and forge.get("diagnostics") is True


class EditorDiagnostics:
    """The client's diagnostics of the workspace's files (see the module's docstring); one per workspace."""

    def __init__(self, server: ForgeLanguageServer, root: Path) -> None:
        self.server = server
        self.root = root.resolve()
        self._told = False

    def unavailable(self) -> str | None:
        """Why the client cannot give its diagnostics (None: it can); said once in the log."""
        if can_report(self.server.client_capabilities):
            return None
        if not self._told:
            self._told = True
            self.server.log(TOLD.format(why=CANNOT), t.MessageType.Info)
        return CANNOT

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else path.name

    async def diagnostics(self, path: Path, wait_ms: int, *, edited: bool) -> EditorReport | None:
        uri = path.as_uri()
        doc = self.server.workspace.text_documents.get(uri)
        # Before an edit, an open document's diagnostics are what the editor has now; one it must open first is
        # waited for, as after an edit.
        wait = wait_ms if edited or doc is None else 0
        params = {"documents": [{"uri": uri, "version": doc.version if doc is not None else None}], "waitMs": wait}
        rel = self._rel(path)
        try:
            async with asyncio.timeout(wait / 1000 + GRACE_SECS):
                answer = await self.server.protocol.send_request_async(DIAGNOSTICS, params)
        except TimeoutError:
            log.warning("%s: the editor did not answer %s within %.1f s", rel, DIAGNOSTICS, wait / 1000 + GRACE_SECS)
            return None
        except Exception as exc:  # the client's error answer: logged, the call goes on unchecked
            log.warning("%s: the editor's answer to %s: %s", rel, DIAGNOSTICS, exc)
            return None
        return self._report(rel, answer)

    @staticmethod
    def _report(rel: str, answer: Any) -> EditorReport | None:
        """The answer as a report (None: it is not the shape the request asks for)."""
        first = answer[0] if isinstance(answer, list) and answer else None
        diagnostics = first.get("diagnostics") if isinstance(first, Mapping) else None
        if not isinstance(first, Mapping) or not isinstance(diagnostics, list):
            log.warning("%s: the editor's answer to %s is not [{uri, diagnostics}]: %.200r", rel, DIAGNOSTICS, answer)
            return None
        problems = tuple(p for d in diagnostics[:MAX_DIAGNOSTICS] if (p := from_lsp(rel, d)) is not None)
        return EditorReport(problems, caught_up=first.get("caughtUp") is not False)
