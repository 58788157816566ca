"""forge-lsp's values as ACP's, and back: tool kinds, permission options, prompts, locations, plans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import plan_entry
from acp.schema import PermissionOption, ToolCallLocation

KINDS = {
    "read": "read",
    "fs_search": "search",
    "write": "edit",
    "patch": "edit",
    "multi_patch": "edit",
    "undo": "edit",
    "remove": "delete",
    "shell": "execute",
    "fetch": "fetch",
    "todo_write": "think",
    "todo_read": "think",
    "followup": "think",
}
"""ACP's tool kinds for Forge's tools."""

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"
PERMISSION_OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this conversation", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Deny", kind="reject_once"),
]
MAX_PROMPT_RESOURCE_CHARS = 100_000


def prompt_text(blocks: list[Any]) -> str:
    """The user's prompt: text blocks, embedded resources (as fenced context) and resource links."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"(See {block.uri}.)")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f"Context from {resource.uri}:\n```\n{text[:MAX_PROMPT_RESOURCE_CHARS]}\n```")
            else:
                parts.append(f"(A binary resource was attached: {resource.uri}.)")
        else:
            parts.append(f"(An {kind} block was attached; forge-lsp reads text only.)")
    return "\n\n".join(p for p in parts if p)


def locations(tool: str, arguments: str, root: Path) -> list[ToolCallLocation] | None:
    """Where a tool call acts, for the client to follow: the file or folder it names."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    target = args.get("file_path") or args.get("path")
    if not isinstance(target, str) or not target:
        return None
    path = Path(target) if Path(target).is_absolute() else root / target
    line = args.get("start_line")
    return [ToolCallLocation(path=str(path), line=line if isinstance(line, int) and line >= 0 else None)]


def _json(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


def _plan_status(status: str) -> Any:
    return status if status in ("pending", "in_progress", "completed") else "pending"


def _plan(todos: list[dict[str, str]]) -> list[Any]:
    """ACP plan entries for a todo list (a cancelled todo shows as pending: ACP has no such status)."""
    return [plan_entry(t["content"], priority="medium", status=_plan_status(t.get("status", ""))) for t in todos]


def _todos(args: Any) -> list[dict[str, str]] | None:
    """The todo list a stored todo_write call set, or None if its arguments are not one."""
    items = args.get("todos") if isinstance(args, dict) else None
    if not isinstance(items, list):
        return None
    todos = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not isinstance(item.get("status"), str):
            return None
        todos.append({"content": item["content"], "status": item["status"]})
    return todos
