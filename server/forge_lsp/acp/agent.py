"""The ACP agent: sessions are conversations, prompts are turns, turn events are session updates.

Built on the agent side of the ``agent-client-protocol`` package; the
workspace runtime (config, trust, templates, tools, SQLite state) is the one
the language server uses. A session's id is its conversation's id, so
session/load after a restart finds it in ``.forge/state.sqlite3``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    update_agent_message_text,
    update_agent_thought_text,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    PromptCapabilities,
    ToolCallUpdate,
)

from forge_lsp import __version__
from forge_lsp.acp.conversions import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    PERMISSION_OPTIONS,
    Update,
    history_updates,
    plan_update,
    prompt_text,
    tool_finished,
    tool_retried,
    tool_started,
)
from forge_lsp.acp.transport import serve_stdio
from forge_lsp.domain.events import (
    AssistantText,
    Event,
    Interrupt,
    LlmRetry,
    MaxRequestPerTurnLimitReached,
    Reasoning,
    Retry,
    ToolCallFinished,
    ToolCallStarted,
    TurnSummary,
)
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.redact import redact, redact_data
from forge_lsp.tools.base import DiskFiles

log = logging.getLogger(__name__)


class ClientFiles(DiskFiles):
    """Edits through the client (its unsaved buffers) when it offers fs/*; the disk otherwise.

    The client is asked only about a regular file or one that does not exist yet (a
    FIFO or a device is the disk's to refuse), and text over ``max_chars`` is not
    taken from it: the disk read then applies the size limit with its own message.
    """

    def __init__(self, agent: ForgeAgent, session_id: str, caps: ClientCapabilities | None, max_chars: int) -> None:
        self.agent = agent
        self.session_id = session_id
        self.max_chars = max_chars
        fs = caps.fs if caps is not None else None
        self.can_read = bool(fs and fs.read_text_file)
        self.can_write = bool(fs and fs.write_text_file)

    async def read_text(self, path: Path) -> str | None:
        if not self.can_read or self.agent.conn is None:
            return None
        if not await asyncio.to_thread(_regular_or_absent, path):
            return None
        try:
            response = await self.agent.conn.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:  # the client cannot: read the disk
            log.info("fs/read_text_file %s: %s; reading the disk", path, exc)
            return None
        content = getattr(response, "content", None)
        if not isinstance(content, str) or len(content) > self.max_chars:
            return None
        return content

    async def write_text(self, path: Path, content: str) -> None:
        if self.can_write and self.agent.conn is not None:
            await self.agent.conn.write_text_file(session_id=self.session_id, path=str(path), content=content)
            return
        await super().write_text(path, content)


class Session:
    """One ACP session: a conversation in one workspace, and what its running turn has shown."""

    def __init__(self, session_id: str, root: Path) -> None:
        self.id = session_id
        self.root = root
        self.current_call: str | None = None
        self.outputs: dict[str, str] = {}
        self.told_trust = False
        self.allowed: set[str] = set()
        """Questions answered "Allow for this conversation" in this session (not in the workspace's other sessions)."""
        self.todos: list[dict[str, str]] = []
        """This session's todo list: the runtime's list holds it while a turn of this session runs."""


class ForgeAgent:
    """The agent side of ACP over the workspace runtime."""

    def __init__(self) -> None:
        self.conn: Client | None = None
        self.client_caps: ClientCapabilities | None = None
        self.runtimes: dict[Path, Any] = {}
        self.sessions: dict[str, Session] = {}
        self.background: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # -- the runtime of a workspace ------------------------------------------

    def runtime_for(self, cwd: str) -> Any:
        from forge_lsp.runtime import WorkspaceRuntime

        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise invalid_params(f"cwd must be an absolute path, got {cwd!r}")
        root = Path(cwd).resolve()
        if not root.is_dir():
            raise invalid_params(f"{root} is not a folder")
        if root not in self.runtimes:
            runtime = WorkspaceRuntime(root)  # trusted only if the user's trust store says so
            runtime.on_notice = lambda message: log.warning("%s", message)
            self.runtimes[root] = runtime
        return self.runtimes[root]

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid_params(f"no session {session_id!r}: session/new or session/load first")
        return session

    async def update(self, session_id: str, update: Update) -> None:
        if self.conn is not None:
            await self.conn.session_update(session_id=session_id, update=update)

    # -- ACP methods -----------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_caps = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="forge-lsp", title="Forge (forge-lsp)", version=__version__),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        runtime = self.runtime_for(cwd)
        if mcp_servers:
            log.info("session/new: %d MCP server(s) offered; forge-lsp uses its own tools only", len(mcp_servers))
        conversation = await asyncio.to_thread(runtime.store.new_conversation)
        self.sessions[conversation] = Session(conversation, runtime.root)
        return NewSessionResponse(session_id=conversation)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> LoadSessionResponse:
        runtime = self.runtime_for(cwd)
        store = runtime.store
        if not store.select_conversation(session_id):
            raise invalid_params(f"no conversation {session_id!r} in {runtime.root}")
        session = Session(session_id, runtime.root)
        self.sessions[session_id] = session
        await self.replay(session, store.history(session_id))
        return LoadSessionResponse()

    async def replay(self, session: Session, history: list[ChatMessage]) -> None:
        """The stored conversation as session/update notifications, in order; the last todo_write is the plan again."""
        updates, todos = history_updates(history, session.root)
        if todos is not None:
            session.todos = todos
        for update in updates:
            await self.update(session.id, update)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.session(session_id)
        runtime = self.runtimes[session.root]
        text = prompt_text(prompt)
        if not text.strip():
            raise invalid_params("the prompt has no text")
        from forge_lsp.runtime import NoModel, TurnInProgress

        if not session.told_trust and runtime.untrusted_problems():
            session.told_trust = True
            ignored = ", ".join(sorted({p.key or (p.path.name if p.path else "") for p in runtime.untrusted_problems()}))
            await self.update(
                session_id,
                update_agent_message_text(
                    f"(forge-lsp: {runtime.root} is not trusted, so these workspace settings are ignored: {ignored}. "
                    f"`forge-lsp trust {runtime.root}` trusts it.)\n\n"
                ),
            )
        if runtime.running:
            raise refused(f"a turn is already running in {runtime.root}; cancel it first")
        runtime.store.select_conversation(session_id)
        runtime.files = ClientFiles(self, session_id, self.client_caps, runtime.config.max_file_size_bytes)
        runtime.ask = lambda tool, question: self.ask(session, tool, question)
        runtime.todos[:] = session.todos  # the list the turn's tools hold: this session's plan
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        pump = asyncio.ensure_future(self.pump(session, runtime, queue))
        try:
            summary: TurnSummary = await runtime.run(text, queue.put_nowait)
        except (TurnInProgress, NoModel) as exc:
            raise refused(str(exc)) from None
        except ValueError as exc:
            raise invalid_params(str(exc)) from None
        finally:
            session.todos = list(runtime.todos)
            queue.put_nowait(None)
            await pump
        return await self.finish(session, summary)

    async def finish(self, session: Session, summary: TurnSummary) -> PromptResponse:
        """The stop reason (and, for an interrupt or a failure, the reason said in a message and in _meta)."""
        status = summary.status.value
        meta: dict[str, Any] = {"forge": redact_data(summary.to_dict())}
        if status == "cancelled":
            return PromptResponse(stop_reason="cancelled", field_meta=meta)
        if status == "failed":
            await self.update(session.id, update_agent_message_text(f"\n\nThe turn failed: {redact(summary.error or '')}"))
            return PromptResponse(stop_reason="end_turn", field_meta=meta)
        if summary.reason is not None:
            meta.update(summary.reason.to_dict())
            if isinstance(summary.reason, MaxRequestPerTurnLimitReached):
                return PromptResponse(stop_reason="max_turn_requests", field_meta=meta)
            # The agent stopped by its own rule, not the model's refusal: end_turn (a client may treat
            # "refusal" as the model refusing the prompt), the reason in a message and in _meta.
            await self.update(
                session.id,
                update_agent_message_text(f"\n\nInterrupted: {summary.reason.describe()}. Send a new prompt to continue."),
            )
        return PromptResponse(stop_reason="end_turn", field_meta=meta)

    async def pump(self, session: Session, runtime: Any, queue: asyncio.Queue[Event | None]) -> None:
        """Turn events, in order, as session updates (a slow client never blocks the turn)."""
        while (event := await queue.get()) is not None:
            try:
                await self.send_event(session, runtime, event)
            except Exception as exc:  # a client that went away: the turn goes on and is stored
                log.warning("session/update failed: %s", exc)

    async def send_event(self, session: Session, runtime: Any, event: Event) -> None:
        sid = session.id
        if isinstance(event, AssistantText):
            await self.update(sid, update_agent_message_text(redact(event.text)))
        elif isinstance(event, Reasoning):
            await self.update(sid, update_agent_thought_text(redact(event.text)))
        elif isinstance(event, ToolCallStarted):
            session.current_call = event.call_id
            await self.update(sid, tool_started(event, session.root))
        elif isinstance(event, ToolCallFinished):
            output = redact(event.output)
            session.outputs[event.call_id] = output
            await self.update(sid, tool_finished(event.call_id, event.ok, output))
            if event.tool == "todo_write" and event.ok:
                await self.update(sid, plan_update(runtime.todos))
        elif isinstance(event, Retry):
            await self.update(sid, tool_retried(event, session.outputs.get(event.call_id, redact(event.error))))
        elif isinstance(event, LlmRetry):
            log.info("model request retried (attempt %s, %s ms): %s", event.attempt, event.delay_ms, event.cause)
        elif isinstance(event, Interrupt):
            log.info("turn interrupted: %s", event.reason.summary())

    async def ask(self, session: Session, tool: str, question: str) -> str:
        """A confirm rule matched: session/request_permission (allow once, allow always, reject).

        "Allow for this conversation" is remembered here, per session, and answered to the
        runtime as "allow": the runtime's own memory is the workspace's, shared by its sessions.
        """
        if question in session.allowed:
            return "allow"
        if self.conn is None:
            return "deny"
        call = ToolCallUpdate(tool_call_id=session.current_call or "forge-permission", title=redact(question))
        response = await self.conn.request_permission(session_id=session.id, tool_call=call, options=PERMISSION_OPTIONS)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
        if chosen == ALLOW_ALWAYS:
            session.allowed.add(question)
        return "allow" if chosen in (ALLOW_ONCE, ALLOW_ALWAYS) else "deny"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.root in self.runtimes:
            self.runtimes[session.root].cancel()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        for runtime in self.runtimes.values():
            runtime.close()


def invalid_params(message: str) -> RequestError:
    """A request the client got wrong, with a message that says what (not a bare "Invalid params")."""
    return RequestError(-32602, message)


def refused(message: str) -> RequestError:
    """A prompt that cannot run now (no model set, a turn running), saying why."""
    return RequestError(-32600, message)


def _regular_or_absent(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


async def serve() -> int:
    """`forge-lsp acp`: serve ACP on stdin/stdout until the client closes it."""
    return await serve_stdio(ForgeAgent())
