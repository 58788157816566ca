"""todo_write and todo_read: the agent's task list for the conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, obj, string

STATUSES = ("pending", "in_progress", "completed", "cancelled")


def render(todos: list[dict[str, str]]) -> str:
    """The list as lines of [status] content."""
    return "\n".join(f"{i}. [{t['status']}] {t['content']}" for i, t in enumerate(todos, 1)) or "(no todos)"


async def run_write(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Replace the todo list."""
    todos = []
    for i, item in enumerate(args["todos"], 1):
        if item["status"] not in STATUSES:
            raise ToolFailure(f"todo {i}: status must be one of {', '.join(STATUSES)}, got {item['status']!r}")
        todos.append({"content": item["content"], "status": item["status"]})
    ctx.todos[:] = todos
    return ToolOutput("Todo list updated:\n" + render(todos))


async def run_read(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Show the todo list."""
    return ToolOutput(render(ctx.todos))


TODO_WRITE = Implementation(
    description="Replace your todo list for this task. Statuses: pending, in_progress, completed, cancelled.",
    parameters=obj(
        {
            "todos": {
                "type": "array",
                "items": obj(
                    {"content": string("What to do."), "status": {"type": "string", "enum": list(STATUSES)}},
                    ["content", "status"],
                ),
            }
        },
        ["todos"],
    ),
    run=run_write,
)

TODO_READ = Implementation(
    description="Show your current todo list.",
    parameters=obj({}, []),
    run=run_read,
)
