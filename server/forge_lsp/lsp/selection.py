"""The editor's context of a turn: the file the user is in, the lines selected there, and the open
documents whose text is not saved yet, as the editor has them (docs/design.md "The editor's context")."""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from forge_lsp.domain.events import EDITOR_CONTEXT_HEADING
from forge_lsp.lsp.language_server import ForgeLanguageServer, uri_to_path
from forge_lsp.redact import redact

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

MAX_SELECTION_CHARS = 20_000
MAX_SELECTED_FILE_BYTES = 10 * 1024 * 1024
MAX_DIFF_CHARS = 4_000
"""Of one unsaved buffer's changes in the prompt (the read tool has the whole text)."""
MAX_DIFFS_CHARS = 12_000
"""Of all unsaved buffers' changes together."""
MAX_UNSAVED = 20
"""Open documents compared with their saved file, at most (the rest are not named)."""
MAX_DIFFED_CHARS = 1_000_000
"""A buffer larger than this is named as unsaved, its changes not shown."""


@dataclass
class EditorContext:
    """What a turn's prompt carries from the editor: text added to the prompt, and what went in (the transcript's)."""

    text: str = ""
    file: str | None = None
    range: dict[str, Any] | None = None
    unsaved: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """{file?, range?, unsaved?}: the turnStarted event's context (empty: none)."""
        out: dict[str, Any] = {}
        if self.file is not None:
            out["file"] = self.file
        if self.range is not None:
            out["range"] = self.range
        if self.unsaved:
            out["unsaved"] = list(self.unsaved)
        return out


def parse_range(rng: Any) -> tuple[int, int]:
    """The first and last line (0-based) of an LSP Range; InvalidParams when it is not one.

    A range that ends at character 0 of a later line (a whole-line selection) ends on the line before."""
    try:
        start = int(rng["start"]["line"])
        end = int(rng["end"]["line"])
        end_char = int(rng["end"].get("character", 1))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise JsonRpcInvalidParams("forge.run: range must be an LSP Range {start: {line, character}, end: {...}}") from None
    if start < 0 or end < start:
        raise JsonRpcInvalidParams("forge.run: range must start at line 0 or later and end at or after its start")
    if end > start and end_char == 0:
        end -= 1
    return start, end


async def document_lines(ls: ForgeLanguageServer, uri: str, path: Path, rel: str) -> list[str]:
    """The lines of uri as the editor has them (the buffer when open, else the file; [] when unreadable)."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None:
        return list(doc.lines)
    from forge_lsp.tools.base import ToolFailure, read_regular

    # Off the event loop, and only a regular file: a FIFO would hang the server.
    try:
        text = await asyncio.to_thread(read_regular, path, rel, MAX_SELECTED_FILE_BYTES)
    except (ToolFailure, OSError) as exc:
        ls.log(f"the file {rel} is not read: {exc}", t.MessageType.Warning)
        text = ""
    return text.splitlines(keepends=True)


def lines_label(start: int, end: int) -> str:
    """'line 3' or 'lines 3-5' (1-based)."""
    return f"line {start + 1}" if start == end else f"lines {start + 1}-{end + 1}"


class _Unreadable(Exception):
    pass


def _saved_text(path: Path) -> str | None:
    """The file's text on disk; None when there is none (a new buffer); _Unreadable when it cannot be compared."""
    from forge_lsp.tools.base import ToolFailure, read_regular

    if not path.exists():
        return None
    try:
        return read_regular(path, path.name, MAX_SELECTED_FILE_BYTES)
    except (ToolFailure, OSError):
        raise _Unreadable from None


def _unsaved_changes(docs: list[tuple[str, Path, str]]) -> list[tuple[str, str]]:
    """(rel, diff) of each open document whose text differs from its file (run in a thread)."""
    found: list[tuple[str, str]] = []
    for rel, path, text in docs:
        try:
            saved = _saved_text(path)
        except _Unreadable:  # a file too large or not text: nothing to compare
            continue
        if saved == text:
            continue
        if max(len(text), len(saved or "")) > MAX_DIFFED_CHARS:  # difflib would take seconds
            found.append((rel, f"(not saved; {rel} is too large to show its changes here: read it)\n"))
            continue
        before = (saved or "").splitlines(keepends=True)
        after = text.splitlines(keepends=True)
        head = ("/dev/null" if saved is None else f"{rel} (saved)", f"{rel} (in the editor)")
        diff = "".join(line if line.endswith("\n") else line + "\n" for line in difflib.unified_diff(before, after, *head, n=2))
        # Sent unasked (the user did not point at it): a key typed into an unsaved .env stays out of the request.
        found.append((rel, redact(diff)))
    return found


async def unsaved_buffers(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> list[tuple[str, str]]:
    """The open documents of runtime's workspace whose text is not saved: (relative path, unified diff)."""
    root = runtime.root.resolve()
    docs: list[tuple[str, Path, str]] = []
    for uri, doc in list(ls.workspace.text_documents.items()):
        if not uri.startswith("file:"):
            continue
        try:
            path = uri_to_path(uri)
            resolved = path.resolve()
        except (JsonRpcException, OSError, RuntimeError):
            continue
        if not resolved.is_relative_to(root) or ".forge" in resolved.relative_to(root).parts[:1]:
            continue
        # The server's view: a buffer the editor did not reload after the agent's command changed its file
        # is the disk's text (lsp/outside_changes.py), not an unsaved change.
        text = await runtime.session.files.read_text(path)
        docs.append((resolved.relative_to(root).as_posix(), path, doc.source if text is None else text))
    docs.sort()
    return await asyncio.to_thread(_unsaved_changes, docs[:MAX_UNSAVED])


async def editor_context(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, uri: str | None, rng: Any) -> EditorContext:
    """The file (and selected lines) the user ran the turn from, and the unsaved buffers, as prompt text."""
    ctx = EditorContext()
    parts: list[str] = []
    if uri:
        path = uri_to_path(uri)
        rel = runtime.workspace.relative(path.resolve())
        ctx.file = str(rel)
        if not isinstance(rng, dict):
            parts.append(f"(The user is in {rel}.)")
        else:
            start, end = parse_range(rng)
            ctx.range = {"start": dict(rng["start"]), "end": dict(rng["end"])}
            lines = await document_lines(ls, uri, path, str(rel))
            selected = "".join(lines[start : end + 1])[:MAX_SELECTION_CHARS]
            parts.append(f"(The user selected lines {start + 1}-{end + 1} of {rel}:)\n```\n{selected.rstrip()}\n```")
    unsaved = await unsaved_buffers(ls, runtime)
    if unsaved:
        ctx.unsaved = [rel for rel, _ in unsaved]
        budget = MAX_DIFFS_CHARS
        diffs: list[str] = []
        for rel, diff in unsaved:
            shown = diff[: min(MAX_DIFF_CHARS, budget)]
            budget -= len(shown)
            if len(shown) < len(diff):
                shown += f"... (cut: read {rel} for the rest)\n"
            diffs.append(shown)
            if budget <= 0:
                break
        fence = "```"
        while any(fence in d for d in diffs):
            fence += "`"
        parts.append(
            f"(Open in the editor with unsaved changes: {', '.join(ctx.unsaved)}. The read, patch and write tools "
            "see their text as the editor has it; shell commands and fs_search see the saved files. "
            f"The changes not saved yet:)\n{fence}diff\n{''.join(diffs).rstrip()}\n{fence}"
        )
    ctx.text = "\n\n".join(parts)
    return ctx


def attached(ctx: EditorContext) -> str:
    """The editor's context as the prompt carries it, after the prompt (its first line stays the conversation's
    title); "" for none."""
    return f"{EDITOR_CONTEXT_HEADING}\n{ctx.text}" if ctx.text else ""
