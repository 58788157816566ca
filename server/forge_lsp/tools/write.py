"""write: create a file, or overwrite one when asked to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, boolean, check_text, obj, string


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Write content to file_path; an existing file needs overwrite=true."""
    path = ctx.workspace.resolve(args["file_path"])
    rel = ctx.workspace.relative(path)
    if path.is_dir():
        raise ToolFailure(f"{rel} is a directory", rel)
    if path.exists() and not args.get("overwrite", False):
        raise ToolFailure(f"{rel} already exists; read it first, then write with overwrite=true or use patch", rel)
    content = check_text(args["content"], "content", rel)
    await ctx.change_file(path, content)
    return ToolOutput(
        f"Wrote {len(content.encode())} bytes ({content.count(chr(10)) + bool(content and not content.endswith(chr(10)))} lines) to {rel}",
        rel,
    )


TOOL = Implementation(
    description="Create a file with the given content. Overwriting an existing file needs overwrite=true.",
    parameters=obj(
        {
            "file_path": string("Path of the file to write."),
            "content": string("The whole new content of the file."),
            "overwrite": boolean("Replace the file if it exists (default false)."),
        },
        ["file_path", "content"],
    ),
    run=run,
)
