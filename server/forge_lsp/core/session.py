"""A session: one conversation's own state in a workspace, whichever frontend drives it.

The workspace's runtime is shared (config, trust, templates, tools, state, one turn at a
time); what one conversation decides stays with its session: where its edits go (the
editor's buffers, an ACP client's fs/*, the disk), whom a confirm rule asks, the answers
"Allow for this conversation" and the todo list.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from forge_lsp.domain.messages import ChatMessage
from forge_lsp.tools.base import FileStore, NobodyToAsk

if TYPE_CHECKING:
    from forge_lsp.tools.mcp.manager import McpManager

log = logging.getLogger(__name__)

Ask = Callable[[str, str, str | None], Awaitable[str]]
"""Asks the user about a tool call (tool, question, the call's id when known): "allow", "deny" or "always"."""

UNASKED = "unasked"


async def deny_all(_tool: str, _question: str, _call_id: str | None = None) -> str:
    """The answer when nobody can be asked (forge-lsp run): not the user's "deny"."""
    return UNASKED


class Session:
    """One conversation's files, permission broker, allow-for-this-conversation answers and todos.

    conversation_id None is the workspace's current conversation (the language server's and the
    CLI's: forge.newConversation and forge.openConversation move it); a session of its own
    conversation (ACP's) names it.
    """

    def __init__(self, conversation_id: str | None, files: FileStore, ask: Ask = deny_all) -> None:
        self.conversation_id = conversation_id
        self.files = files
        self.ask = ask
        self.allowed: set[str] = set()
        """Questions answered "Allow for this conversation"."""
        self.todos: list[dict[str, str]] = []
        """The todo list (todo_write / todo_read), this conversation's plan."""
        self.mcp: McpManager | None = None
        """This session's own MCP servers (ACP's session/new mcpServers), besides the workspace's."""

    def reset(self) -> None:
        """Another conversation begins in this session: earlier answers and todos do not carry over."""
        self.allowed.clear()
        self.todos.clear()

    async def confirm(self, tool: str, question: str, call_id: str | None = None) -> bool:
        """A confirm rule matched (in the tool call call_id): asks once per question and conversation
        when the answer was "always".

        NobodyToAsk when nobody can answer (forge-lsp run): the tool says so instead of "denied".
        """
        if question in self.allowed:
            return True
        try:
            answer = await self.ask(tool, question, call_id)
        except Exception as exc:  # a client that cannot answer means no
            log.warning("could not ask the user (%s); denying", exc)
            return False
        if answer == UNASKED:
            raise NobodyToAsk(question)
        if answer == "always":
            self.allowed.add(question)
        return answer in ("allow", "always")

    def restore_todos(self, history: Iterable[ChatMessage]) -> list[dict[str, str]]:
        """The todo list of the conversation's last successful todo_write (a resumed conversation's plan)."""
        calls: dict[str, list[dict[str, str]]] = {}
        for message in history:
            if message.role == "assistant":
                for call in message.tool_calls:
                    todos = todo_list(call.arguments_json) if call.name == "todo_write" else None
                    if todos is not None:
                        calls[call.id] = todos
            elif message.tool_call_id in calls and "<tool_call_error>" not in (message.content or ""):
                self.todos[:] = calls[message.tool_call_id]
        return self.todos


def todo_list(arguments: str) -> list[dict[str, str]] | None:
    """The todo list a todo_write call's arguments set, or None if they are not one."""
    try:
        args: Any = json.loads(arguments or "{}")
    except ValueError:
        return None
    items = args.get("todos") if isinstance(args, dict) else None
    if not isinstance(items, list):
        return None
    todos = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not isinstance(item.get("status"), str):
            return None
        todos.append({"content": item["content"], "status": item["status"]})
    return todos
