"""undo: restore a file to what it was before the agent's last change to it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, obj, string


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Revert the last write, patch or remove of one file."""
    path = ctx.workspace.resolve(args["path"])
    rel = ctx.workspace.relative(path)
    ctx.check_changeable(path)
    current = await ctx.current(path)
    try:
        previous = ctx.snapshots.pop(path)
    except ToolFailure as exc:
        raise ToolFailure(f"{rel}: {exc}", rel) from None
    if previous is None:
        if path.exists():
            await ctx.apply_change(path, current, None)
        return ToolOutput(f"Undid the creation of {rel}: removed it", rel)
    await ctx.apply_change(path, current, previous)
    return ToolOutput(f"Restored {rel} to its content before the last change", rel)


TOOL = Implementation(
    description="Undo the last write, patch or remove of a file made in this session.",
    parameters=obj({"path": string("Path of the file to restore.")}, ["path"]),
    run=run,
)
