"""A session: one conversation's own state in a workspace, whichever frontend drives it.

The workspace's runtime is shared (config, trust, templates, tools, state, one turn at a
time); what one conversation decides stays with its session: where its edits go (the
editor's buffers, an ACP client's fs/*, the disk), the answers "Allow for this conversation" and the todo
list. A confirm rule's question goes to the frontend in the turn's event stream (asking()).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from forge_lsp.domain.events import Event
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.domain.questions import Answer, PermissionAsked
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


def asking(emit: Callable[[Event], None], turn_id: str) -> Ask:
    """Ask in the turn's event stream: a PermissionAsked event that the frontend answers (UNASKED when it does not
    take the question as the event reaches it)."""

    async def ask(tool: str, question: str, call_id: str | None = None) -> str:
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def give(answer: str) -> None:
            if not answered.done():
                answered.set_result(answer)

        slot = Answer(give)
        emit(PermissionAsked(turn_id, tool, question, call_id, slot))
        if not slot.taken:
            return UNASKED
        try:
            return await answered
        except asyncio.CancelledError:  # the turn was cancelled while the user was being asked
            slot.withdraw()
            raise

    return ask


def answer(question: PermissionAsked, ask: Ask) -> None:
    """A frontend answers a question with ask, in a task of its own (the user may take a while): "deny" when ask
    fails (a client that cannot answer means no); the task is cancelled if the question is withdrawn. A frontend
    that asks later than the event reaches it (in its turn among the updates it sends) takes the question first
    (question.answer.take()), as the event reaches it."""
    if question.answer is None:
        return

    async def asked() -> str:
        try:
            return await ask(question.tool, question.question, question.call_id)
        except Exception as exc:
            log.warning("could not ask the user (%s); denying", exc)
            return "deny"

    answer_in_task(question.answer, asked)


def answer_in_task(slot: Answer, produce: Callable[[], Awaitable[Any]]) -> None:
    """Take a question's slot and give it what produce() returns, in a task of its own (the user may take a
    while), cancelled if the question is withdrawn (its turn cancelled meanwhile)."""
    give = slot.take()

    async def answered() -> None:
        give(await produce())

    task = asyncio.ensure_future(answered())

    def withdrawn() -> None:
        task.cancel()

    slot.on_withdrawn(withdrawn)


class Session:
    """One conversation's files, allow-for-this-conversation answers and todos.

    conversation_id None is the workspace's current conversation (the language server's and the
    CLI's: forge.newConversation and forge.openConversation move it); a session of its own
    conversation (ACP's) names it.
    """

    def __init__(self, conversation_id: str | None, files: FileStore) -> None:
        self.conversation_id = conversation_id
        self.files = files
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

    async def confirm(self, tool: str, question: str, call_id: str | None = None, ask: Ask = deny_all) -> bool:
        """A confirm rule matched (in the tool call call_id): asks (a turn asks in its event stream: asking())
        once per question and conversation when the answer was "always".

        NobodyToAsk when nobody can answer (forge-lsp run): the tool says so instead of "denied".
        """
        if question in self.allowed:
            return True
        try:
            given = await ask(tool, question, call_id)
        except Exception as exc:  # a client that cannot answer means no
            log.warning("could not ask the user (%s); denying", exc)
            return False
        if given == UNASKED:
            raise NobodyToAsk(question)
        if given == "always":
            self.allowed.add(question)
        return given in ("allow", "always")

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
