"""The workspace runtime an LSP request is for: one per workspace folder, opened on first use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidParams

from forge_lsp.lsp import mcp_report
from forge_lsp.lsp.config_report import report_config
from forge_lsp.lsp.language_server import ForgeLanguageServer, uri_to_path

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime


def runtime_for(ls: ForgeLanguageServer, uri: str | None = None) -> WorkspaceRuntime:
    """The runtime of the folder holding uri (the first folder when uri is None)."""
    roots = ls.roots()
    if not roots:
        raise JsonRpcInvalidParams("the client opened no workspace folder; forge-lsp needs one")
    root = roots[0]
    if uri:
        path = uri_to_path(uri).resolve()
        inside = [r for r in roots if path.is_relative_to(r.resolve())]
        if not inside:
            raise JsonRpcInvalidParams(f"{uri} is not inside a workspace folder")
        root = max(inside, key=lambda r: len(r.parts))
    return ls.workspaces.get(root)


def open_runtime(ls: ForgeLanguageServer, root: Path) -> WorkspaceRuntime:
    """A workspace folder's runtime: edits through the editor, questions as showMessageRequest; its config reported."""
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.lsp.editor_diagnostics import EditorDiagnostics
    from forge_lsp.lsp.files import EditorFiles

    files = EditorFiles(ls, root)
    runtime = WorkspaceRuntime(
        root,
        files=files,
        editor_settings=ls.editor_settings,
        editor_trust=ls.editor_trust,
        wording=ls.wording,
        on_notice=ls.show_notice,
        diagnostics=EditorDiagnostics(ls, root),
    )
    mcp_report.wire(ls, runtime)
    report_config(ls, runtime)
    return runtime
