"""The prompt of a forge.run from an editor: the file the user is in, and the lines selected there."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams

from forge_lsp.lsp.language_server import ForgeLanguageServer, uri_to_path

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

MAX_SELECTION_CHARS = 20_000
MAX_SELECTED_FILE_BYTES = 10 * 1024 * 1024


async def with_selection(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, prompt: str, uri: str | None, rng: Any) -> str:
    """The prompt, with the file (and selected lines) the user ran it from."""
    if not uri:
        return prompt
    path = uri_to_path(uri)
    rel = runtime.workspace.relative(path.resolve())
    if not isinstance(rng, dict):
        return f"{prompt}\n\n(The user is in {rel}.)"
    try:
        start = int(rng["start"]["line"])
        end = int(rng["end"]["line"])
    except (KeyError, TypeError, ValueError):
        raise JsonRpcInvalidParams("forge.run: range must be an LSP Range {start: {line, character}, end: {...}}") from None
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None:
        lines = doc.lines
    else:
        from forge_lsp.tools.base import ToolFailure, read_regular

        # Off the event loop, and only a regular file: a FIFO would hang the server.
        try:
            text = await asyncio.to_thread(read_regular, path, str(rel), MAX_SELECTED_FILE_BYTES)
        except (ToolFailure, OSError) as exc:
            ls.log(f"forge.run: the selection's file is not read: {exc}", t.MessageType.Warning)
            text = ""
        lines = text.splitlines(keepends=True)
    selected = "".join(lines[start : end + 1])[:MAX_SELECTION_CHARS]
    return f"{prompt}\n\n(The user selected lines {start + 1}-{end + 1} of {rel}:)\n```\n{selected.rstrip()}\n```"
