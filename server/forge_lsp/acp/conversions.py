"""forge-lsp's values as ACP's, and back: tool kinds, permission options, prompts, locations, plans.

Pure: the session updates a turn's events and a stored conversation show are built
here; the agent sends them and keeps its sessions' bookkeeping.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    PermissionOption,
    PlanEntry,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from forge_lsp.core.session import todo_list
from forge_lsp.domain.events import Retry, ToolCallStarted
from forge_lsp.domain.messages import ChatMessage, describe
from forge_lsp.domain.tool_catalog import CATALOG, kind_of
from forge_lsp.redact import redact, redact_data

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


def json_or_text(text: str) -> Any:
    """A tool call's arguments as JSON, or the text itself if it is not JSON."""
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


def _plan_status(status: str) -> PlanEntryStatus:
    return status if status in ("pending", "in_progress", "completed") else "pending"  # type: ignore[return-value]


def plan_entries(todos: list[dict[str, str]]) -> list[PlanEntry]:
    """ACP plan entries for a todo list (a cancelled todo shows as pending: ACP has no such status)."""
    return [plan_entry(t["content"], priority="medium", status=_plan_status(t.get("status", ""))) for t in todos]


# -- session updates ---------------------------------------------------------

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
)
"""The session/update payloads forge-lsp sends."""


def plan_update(todos: list[dict[str, str]]) -> AgentPlanUpdate:
    """The plan a todo list shows."""
    return update_plan(plan_entries(todos))


TITLE_IN_BACKTICKS = {f.name: f.title_arg for f in CATALOG if f.kind in ("execute", "search", "fetch") and f.title_arg}
"""The argument a call of these tools is titled by, in backticks (clients show it as the call's label:
CodeCompanion's line reads "Execute: npm test", not "Execute: shell")."""


def tool_title(tool: str, arguments: str, described: str) -> str:
    """A tool call's title for the client: a shell command, a search pattern or a URL in backticks, or the
    described title ("read: src/a.py")."""
    args = json_or_text(arguments)
    key = TITLE_IN_BACKTICKS.get(tool)
    value = args.get(key) if key and isinstance(args, dict) else None
    if isinstance(value, str) and value.strip() and "`" not in value:
        return f"`{value.strip().splitlines()[0][:80]}`"
    return described or tool


def tool_started(event: ToolCallStarted, root: Path) -> ToolCallStart:
    """A tool call the turn started: its title, kind, where it acts, and its (redacted) arguments."""
    return start_tool_call(
        event.call_id,
        redact(tool_title(event.tool, event.arguments, event.title)),
        kind=kind_of(event.tool),
        status="in_progress",
        locations=locations(event.tool, event.arguments, root),
        raw_input=redact_data(json_or_text(event.arguments)),
    )


def named(update: ToolCallProgress, start: ToolCallStart | None) -> ToolCallProgress:
    """A call's last update with its title and kind again: a client that has let go of the turn (CodeCompanion,
    after the user stopped it) shows a late update as a call of its own, then named, not "Tool call"."""
    if start is not None:
        update.title, update.kind = start.title, start.kind
    return update


def tool_finished(call_id: str, ok: bool, output: str) -> ToolCallProgress:
    """A tool call's result; ``output`` is what the client may see (redacted)."""
    return update_tool_call(call_id, status="completed" if ok else "failed", content=[tool_content(text_block(output))])


def tool_retried(event: Retry, output: str) -> ToolCallProgress:
    """A failed call's one final update: what the model sees of it, its output (redacted) and the retry notice
    with the attempts left. The counts are in ``_meta`` (clients show rawOutput beside the content: the
    notice already says them)."""
    notice = f"<retry>{redact(event.notice)}</retry>"
    update = update_tool_call(
        event.call_id,
        status="failed",
        content=[tool_content(text_block(output)), tool_content(text_block(notice))],
    )
    update.field_meta = {"attemptsLeft": event.attempts_left, "limit": event.limit}
    return update


def history_updates(history: list[ChatMessage], root: Path) -> list[Update]:
    """A stored conversation as session updates, in order; each successful todo_write result is followed
    by the plan it set (the session's own todo list is the core's: Session.restore_todos)."""
    updates: list[Update] = []
    todo_args: dict[str, str] = {}
    for message in history:
        if message.role == "user" and message.content:
            updates.append(update_user_message_text(redact(message.content)))
        elif message.role == "assistant":
            if message.reasoning:
                updates.append(update_agent_thought_text(redact(message.reasoning)))
            if message.content:
                updates.append(update_agent_message_text(redact(message.content)))
            for call in message.tool_calls:
                arguments = call.arguments_json
                if call.name == "todo_write":
                    todo_args[call.id] = arguments
                updates.append(
                    start_tool_call(
                        call.id,
                        redact(tool_title(call.name, arguments, describe(call))),
                        kind=kind_of(call.name),
                        status="in_progress",
                        locations=locations(call.name, arguments, root),
                    )
                )
        elif message.role == "tool" and message.tool_call_id:
            text = redact(message.content or "")
            failed = "<tool_call_error>" in text
            updates.append(tool_finished(message.tool_call_id, not failed, text))
            if not failed and message.tool_call_id in todo_args:
                todos = todo_list(todo_args[message.tool_call_id])
                if todos is not None:
                    updates.append(plan_update(todos))
    return updates
