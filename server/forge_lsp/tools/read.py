"""read: a file's text, a line range of it, with line numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import (
    Implementation,
    ToolContext,
    ToolFailure,
    ToolOutput,
    boolean,
    for_display,
    has_invalid_bytes,
    integer,
    obj,
    string,
)


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Read lines start_line..end_line (1-based, inclusive) of a workspace file."""
    path = ctx.workspace.resolve(args["file_path"])
    rel = ctx.workspace.relative(path)
    raw = await ctx.read_file(path)
    invalid = has_invalid_bytes(raw)
    text = for_display(raw) if invalid else raw
    lines = text.splitlines()
    total = len(lines)
    start = int(args.get("start_line") or 1)
    end = args.get("end_line")
    if start < 1:
        raise ToolFailure(f"start_line must be >= 1, got {start}", rel)
    if end is not None and int(end) < start:
        raise ToolFailure(f"end_line ({end}) is before start_line ({start})", rel)
    if total and start > total:
        raise ToolFailure(f"start_line {start} is past the end of {rel} ({total} lines)", rel)
    last = min(total, int(end) if end is not None else total, start + ctx.config.max_read_lines - 1)
    numbered = args.get("show_line_numbers", True)
    width = ctx.config.max_line_chars

    def clip(line: str) -> str:
        return line if len(line) <= width else f"{line[:width]}... [{len(line) - width} chars cut]"

    body = "\n".join(
        f"{n}:{clip(line)}" if numbered else clip(line) for n, line in enumerate(lines[start - 1 : last], start=start)
    )
    shown = f"{start}-{last}" if total else "0-0"
    note = ""
    if last < total and end is None:
        note = f"\n(showing lines {shown} of {total}; read on with start_line={last + 1})"
    if invalid:
        note += "\n(the file is not valid UTF-8: those bytes are shown as U+FFFD; edits keep them as they are)"
    return ToolOutput(
        f'<file_content path="{rel}" display_lines="{shown}" total_lines="{total}">\n{body}\n</file_content>{note}', rel
    )


TOOL = Implementation(
    description="Read a text file of the workspace. Lines are numbered from 1; use start_line/end_line for large files.",
    parameters=obj(
        {
            "file_path": string("Path of the file, relative to the workspace root or absolute inside it."),
            "start_line": integer("First line to read (1-based)."),
            "end_line": integer("Last line to read (inclusive)."),
            "show_line_numbers": boolean("Prefix each line with its number (default true)."),
        },
        ["file_path"],
    ),
    run=run,
)
