"""patch and multi_patch: exact string replacement in one file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from forge_lsp.tools.base import (
    ChangedInReview,
    ChangedSince,
    Implementation,
    ToolContext,
    ToolFailure,
    ToolOutput,
    boolean,
    check_text,
    has_invalid_bytes,
    obj,
    string,
)


def apply_edit(text: str, old: str, new: str, replace_all: bool, rel: str) -> tuple[str, int]:
    """Replace old with new in text; ToolFailure when old is absent or ambiguous."""
    if not old:
        raise ToolFailure("old_string must not be empty", rel)
    count = text.count(old)
    if count == 0:
        hint = ""
        if "\ufffd" in old and has_invalid_bytes(text):
            hint = " (U+FFFD in old_string stands for bytes that are not UTF-8; they cannot be matched: pick text around them)"
        raise ToolFailure(f"old_string not found in {rel}; read the file and copy the exact text, whitespace included{hint}", rel)
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"old_string occurs {count} times in {rel}; add surrounding lines to make it unique, or set replace_all=true",
            rel,
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1), count if replace_all else 1


RETYPED_TRIES = 3
"""How many times one patch is made: again on the editor's new text when the user typed in the file between
the read and the edit (the editor refuses an edit made for an older version of its buffer); once when the edit
was the user's to review."""


async def apply_edits(ctx: ToolContext, file_path: object, edits: Sequence[Mapping[str, Any]]) -> ToolOutput:
    """Apply every edit to the file, or none of them."""
    path = ctx.workspace.resolve(file_path)
    rel = ctx.workspace.relative(path)
    for tries in range(1, RETYPED_TRIES + 1):
        text, total = replaced(await ctx.read_file(path), edits, rel)
        try:
            await ctx.change_file(path, text)
        except ChangedInReview:
            raise  # the user typed while reviewing it: not shown to them again unasked
        except ChangedSince:
            # Replacements, unlike a whole new content, still mean the same on the user's text: made
            # again there, what they typed stays (or old_string is gone, and the model is told so).
            if tries == RETYPED_TRIES:
                raise
            continue
        break
    return ToolOutput(f"Patched {rel}: {total} replacement(s)", rel)


def replaced(text: str, edits: Sequence[Mapping[str, Any]], rel: str) -> tuple[str, int]:
    """text with every edit made, in order, and the number of replacements; ToolFailure naming the edit that
    cannot be made."""
    total = 0
    for i, edit in enumerate(edits, start=1):
        try:
            old, new = check_text(edit["old_string"], "old_string", rel), check_text(edit["new_string"], "new_string", rel)
            text, n = apply_edit(text, old, new, bool(edit.get("replace_all")), rel)
        except ToolFailure as exc:
            raise ToolFailure(f"edit {i} of {len(edits)}: {exc}" if len(edits) > 1 else str(exc), rel) from None
        total += n
    return text, total


async def run_patch(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Replace old_string with new_string in file_path."""
    return await apply_edits(ctx, args["file_path"], [args])


async def run_multi_patch(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Apply several replacements to one file, all or none."""
    if not args["edits"]:
        raise ToolFailure("edits must not be empty")
    return await apply_edits(ctx, args["file_path"], args["edits"])


EDIT = {
    "old_string": string("The exact text to replace, whitespace included."),
    "new_string": string("The text to put in its place."),
    "replace_all": boolean("Replace every occurrence (default false: old_string must be unique)."),
}

PATCH = Implementation(
    description="Replace an exact string in a file. old_string must match the file exactly and be unique unless replace_all is set.",
    parameters=obj({"file_path": string("Path of the file to change."), **EDIT}, ["file_path", "old_string", "new_string"]),
    run=run_patch,
)

MULTI_PATCH = Implementation(
    description="Apply several exact-string replacements to one file, in order; if any fails, none is applied.",
    parameters=obj(
        {
            "file_path": string("Path of the file to change."),
            "edits": {"type": "array", "items": obj(EDIT, ["old_string", "new_string"]), "description": "The edits, in order."},
        },
        ["file_path", "edits"],
    ),
    run=run_multi_patch,
)
