"""remove: delete a file (undo brings it back)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, obj, string


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Remove one file of the workspace."""
    path = ctx.workspace.resolve(args["path"])
    rel = ctx.workspace.relative(path)
    if path == ctx.workspace.root:
        raise ToolFailure("refusing to remove the workspace root")
    if not os.path.lexists(path):
        raise await ctx.missing(path)
    if path.is_dir():
        raise ToolFailure(f"{rel} is a directory; remove only removes files", rel)
    await ctx.change_file(path, None)
    return ToolOutput(f"Removed {rel}", rel)


TOOL = Implementation(
    description="Delete a file of the workspace. The undo tool can restore it.",
    parameters=obj({"path": string("Path of the file to delete.")}, ["path"]),
    run=run,
)
