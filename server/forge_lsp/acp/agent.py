"""The ACP agent: sessions are conversations, prompts are turns, turn events are session updates.

Built on the agent side of the ``agent-client-protocol`` package; the
workspace runtime (config, trust, templates, tools, SQLite state) is the one
the language server uses. A session's id is its conversation's id, so
session/load after a restart finds it in ``.forge/state.sqlite3``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionModeResponse,
    update_agent_message_text,
    update_agent_thought_text,
)
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    ListSessionsResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    ToolCallUpdate,
)

from forge_lsp import __version__
from forge_lsp.acp.client_files import ClientFiles
from forge_lsp.acp.commands import commands_update, split_prompt
from forge_lsp.acp.conversions import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    PERMISSION_OPTIONS,
    Update,
    history_updates,
    named,
    plan_update,
    prompt_text,
    tool_finished,
    tool_retried,
    tool_started,
)
from forge_lsp.acp.files import ConfigFiles
from forge_lsp.acp.mcp import SessionServers
from forge_lsp.acp.review import review
from forge_lsp.acp.session import AcpSession
from forge_lsp.acp.transport import serve_stdio
from forge_lsp.core.edit_review import answer_review
from forge_lsp.core.errors import BadPrompt, EmptyPrompt, NoModel, TurnInProgress, UnknownAgent, check_prompt
from forge_lsp.core.pipeline import PromptRequest, TurnRunning
from forge_lsp.core.session import Session, answer
from forge_lsp.core.workspaces import Workspaces
from forge_lsp.domain.events import (
    AssistantText,
    Event,
    HookError,
    Interrupt,
    LlmRetry,
    MaxRequestPerTurnLimitReached,
    Reasoning,
    Reminder,
    Retry,
    ToolCallFinished,
    ToolCallStarted,
    TurnSummary,
)
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.domain.questions import EditReviewAsked, PermissionAsked
from forge_lsp.redact import redact, redact_data
from forge_lsp.render import format_hook_error, reminder_line

if TYPE_CHECKING:  # imported when the first workspace opens
    from forge_lsp.core.runtime import WorkspaceRuntime

log = logging.getLogger(__name__)

UNWIND_WAIT_S = 10.0
"""How long a prompt waits for a cancelled turn in its workspace to end before it is refused."""
MAX_TOLD_PROBLEMS = 5
"""Config problems listed in a chat at most (the rest counted)."""


class ForgeAgent:
    """The agent side of ACP over the workspace runtime."""

    def __init__(self) -> None:
        self.conn: Client | None = None
        self.client_caps: ClientCapabilities | None = None
        self.workspaces = Workspaces(self.open_runtime)
        self.sessions: dict[str, AcpSession] = {}
        self.background: set[asyncio.Task[Any]] = set()
        self.unwinding: dict[Path, asyncio.Event] = {}
        """Workspaces whose running turn was cancelled: set once it has ended."""
        self.config_files = ConfigFiles(self.workspaces, self.tell_commands, self.trust_lost)
        """The open workspaces' config files (and the user's), read again when they change on disk."""
        self.mcp_untold: dict[Path, list[tuple[str, str]]] = {}
        """Each workspace's MCP server failures not said in a chat yet: (server name, line)."""

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # -- the runtime of a workspace ------------------------------------------

    def runtime_for(self, cwd: str) -> WorkspaceRuntime:
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise invalid_params(f"cwd must be an absolute path, got {cwd!r}")
        root = Path(cwd).resolve()
        if not root.is_dir():
            raise invalid_params(f"{root} is not a folder")
        return self.workspaces.get(root)

    def open_runtime(self, root: Path) -> WorkspaceRuntime:
        from forge_lsp.core.runtime import WorkspaceRuntime
        from forge_lsp.core.wording import ACP as ACP_WORDING

        # A failure of one of the workspace's own MCP servers is said in the chat of the prompt that started them.
        untold = self.mcp_untold.setdefault(root, [])
        return WorkspaceRuntime(  # trusted only if the user's trust store says so
            root,
            wording=ACP_WORDING,
            on_notice=lambda message: log.warning("%s", message),
            on_mcp_failure=lambda spec, reason: untold.append(
                (spec.name, f"MCP server {spec.name} failed: {reason} ({spec.where()}); its tools are not available")
            ),
        )

    def adopt(self, core: Session, runtime: WorkspaceRuntime) -> AcpSession:
        """A core session becomes this client's: its files through the client's fs/*, its questions as
        session/request_permission."""
        session = AcpSession(core, runtime)
        core.files = ClientFiles(self, session.id, self.client_caps, lambda: runtime.config.max_file_size_bytes)
        self.sessions[session.id] = session
        return session

    def session(self, session_id: str) -> AcpSession:
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
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities(), close=SessionCloseCapabilities()),
            ),
            agent_info=Implementation(name="forge-lsp", title="Forge (forge-lsp)", version=__version__),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        runtime = self.runtime_for(cwd)
        session = self.adopt(await asyncio.to_thread(runtime.new_session), runtime)
        await self.give_servers(session, mcp_servers)
        modes = await asyncio.to_thread(modes_of, session)
        self.announce_commands(session)  # after the last await: the answer is sent first
        return NewSessionResponse(session_id=session.id, modes=modes)

    async def give_servers(self, session: AcpSession, mcp_servers: Any) -> None:
        """The session's MCP servers (session/new, session/load): they start when its first prompt needs their
        tools; a session loaded again stops the ones it had."""
        if session.mcp is not None:
            await session.mcp.close()
            session.mcp = session.core.mcp = None
        if not mcp_servers:
            return
        servers = SessionServers(mcp_servers, session.runtime)
        log.info("session %s: %d MCP server(s) from the client", session.id, len(servers))
        session.mcp = servers
        session.core.mcp = servers.manager

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> LoadSessionResponse:
        runtime = self.runtime_for(cwd)
        try:
            core = await asyncio.to_thread(runtime.load_session, session_id)
        except KeyError:
            raise invalid_params(f"no conversation {session_id!r} in {runtime.root}") from None
        previous = self.sessions.get(session_id)
        if previous is not None and previous.mcp is not None:
            await previous.mcp.close()  # loaded again: the servers of this load replace those
        session = self.adopt(core, runtime)
        await self.give_servers(session, mcp_servers)
        await self.replay(session, await asyncio.to_thread(runtime.history, core))
        modes = await asyncio.to_thread(modes_of, session)
        self.announce_commands(session)  # after the last await: the answer is sent first
        return LoadSessionResponse(modes=modes)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """session/set_mode: the session's agent from its next prompt (kept with its conversation)."""
        session = self.session(session_id)
        try:
            agent = await asyncio.to_thread(session.runtime.set_agent, mode_id, session.core)
        except UnknownAgent as exc:
            raise invalid_params(str(exc)) from None
        if self.conn is not None:
            await self.conn.session_update(session_id=session_id, update=update_current_mode(agent.id))
        return SetSessionModeResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        """The stored conversations that have a turn to resume (session/load), the latest first: those of cwd's
        workspace, or of every workspace this agent has open. One page: nextCursor is never set."""
        runtimes = [self.runtime_for(cwd)] if cwd is not None else list(self.workspaces)
        found: list[tuple[str, SessionInfo]] = []
        for runtime in runtimes:
            for c in await asyncio.to_thread(runtime.list_conversations):
                if c.get("turns"):
                    info = SessionInfo(
                        session_id=c["id"], cwd=str(runtime.root), title=redact(c["title"]) or None, updated_at=c["updated"]
                    )
                    found.append((str(c["updated"]), info))
        found.sort(key=lambda pair: pair[0], reverse=True)
        return ListSessionsResponse(sessions=[info for _, info in found])

    def announce_commands(self, session: AcpSession) -> None:
        """available_commands_update: the workspace's /commands, sent once the session/new or session/load
        answer is on its way (a client learns of the session first). Called after the method's last await:
        the answer is queued when the method returns, before this task first runs."""

        async def announce() -> None:
            await asyncio.sleep(0)
            await self.send_commands(session)

        task = asyncio.ensure_future(announce())
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        self.config_files.watch(session.runtime)

    async def send_commands(self, session: AcpSession) -> None:
        """available_commands_update: the commands in force in the session's workspace."""
        try:
            await self.update(session.id, commands_update(session.runtime))
        except Exception as exc:  # a client gone away: nothing to tell
            log.warning("available_commands_update: %s", exc)

    async def tell_commands(self, runtime: WorkspaceRuntime) -> None:
        """The commands in force in runtime's workspace changed: each of its sessions gets available_commands_update."""
        for session in [s for s in self.sessions.values() if s.runtime is runtime]:
            await self.send_commands(session)

    def trust_lost(self, runtime: WorkspaceRuntime) -> None:
        """runtime's workspace is no longer trusted (a file changed, `forge-lsp trust --revoke`): the next prompt
        of each of its sessions says which of its settings are now ignored."""
        for session in self.sessions.values():
            if session.runtime is runtime:
                session.told_trust = False

    async def replay(self, session: AcpSession, history: list[ChatMessage]) -> None:
        """The stored conversation as session/update notifications, in order; the last todo_write is the plan again."""
        for update in history_updates(history, session.root):
            await self.update(session.id, update)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.session(session_id)
        runtime = session.runtime
        try:
            check_prompt(prompt_text(prompt))
        except EmptyPrompt:
            raise invalid_params("the prompt has no text") from None
        except BadPrompt as exc:
            raise invalid_params(str(exc)) from None
        # A client may send the next prompt before the cancelled one answered: wait until that turn has ended,
        # its workspace's turn lock released too (the turn's task is done a moment before).
        ended = self.unwinding.get(runtime.root)
        if ended is not None and not ended.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), UNWIND_WAIT_S)
        self.unwinding.pop(runtime.root, None)
        was_trusted = runtime.trusted
        runtime.refresh_trust()  # a trust-relevant file changed since the file check
        if was_trusted and not runtime.trusted:
            self.trust_lost(runtime)
        words, attached = split_prompt(prompt)
        try:
            accepted = runtime.accept(PromptRequest(words, attached=attached, session=session.core))
        except TurnRunning:
            return await self.refuse(session, TurnInProgress(f"a turn is already running in {runtime.root}; cancel it first"))
        except BadPrompt as exc:  # an unknown command, a template that fails: said in the chat, the turn ends
            return await self.refuse(session, exc)
        # No ACP client shows the agent's log: a bad key in the user's config.toml or the workspace's is said in
        # the chat (once, and again when the problems change), as `forge-lsp run` prints it.
        problems = [str(problem) for problem in runtime.config_problems()]
        if problems and problems != session.told_problems:
            listed = "\n".join(f"- {problem}" for problem in problems[:MAX_TOLD_PROBLEMS])
            more = f"\n- and {len(problems) - MAX_TOLD_PROBLEMS} more" if len(problems) > MAX_TOLD_PROBLEMS else ""
            await self.update(
                session_id,
                update_agent_message_text(f"(forge-lsp: problems in the config; each is ignored:\n{listed}{more})\n\n"),
            )
        session.told_problems = problems
        ignored_keys = runtime.ignored_keys()
        if not session.told_trust and ignored_keys:
            session.told_trust = True
            ignored = ", ".join(ignored_keys)
            await self.update(
                session_id,
                update_agent_message_text(
                    f"(forge-lsp: {runtime.root} is not trusted{runtime.untrusted_since()}, so these workspace settings are ignored: "
                    f"{ignored}. `forge-lsp trust {runtime.root}` trusts it.)\n\n"
                ),
            )
        if told := await self.start_mcp(session):
            await self.update(session_id, update_agent_message_text(told))
        queue: asyncio.Queue[Event | None] = asyncio.Queue()

        def emit(event: Event) -> None:
            if isinstance(event, PermissionAsked | EditReviewAsked) and event.answer is not None:
                event.answer.take()  # asked by the pump, in its turn: after the tool call it is about was sent
            queue.put_nowait(event)

        pump = asyncio.ensure_future(self.pump(session, queue))
        refusal: TurnInProgress | NoModel | None = None
        session.prompting = True
        try:
            summary: TurnSummary = await runtime.prompt(accepted, emit)
        except (TurnInProgress, NoModel) as exc:
            refusal = exc
        finally:
            session.prompting = False
            queue.put_nowait(None)
            await pump
            session.outputs.clear()
            session.started.clear()
            if (ended := self.unwinding.get(runtime.root)) is not None:
                ended.set()
        if refusal is not None:
            return await self.refuse(session, refusal)
        return await self.finish(session, summary)

    async def start_mcp(self, session: AcpSession) -> str:
        """The MCP servers the turn will use, the workspace's and the session's, started now (once, all at once,
        bounded); what to say of their failures before the turn (each once), "" for nothing."""
        runtime = session.runtime
        # A server the session was given shadows the workspace's of the same name (a later source wins per name):
        # that one is not started for this session, and its failures are not this session's to hear.
        own = set(session.mcp.manager.servers) if session.mcp is not None else set()
        both = await asyncio.gather(
            session.mcp.start() if session.mcp is not None else asyncio.sleep(0, ""), runtime.mcp.wait_started(own)
        )
        told = both[0] or ""
        untold = self.mcp_untold.get(runtime.root, [])
        lines = [line for name, line in untold if name not in own]
        untold[:] = [(name, line) for name, line in untold if name in own]
        return "".join(f"(forge-lsp: {redact(line)}.)\n\n" for line in lines) + told

    async def refuse(self, session: AcpSession, exc: TurnInProgress | NoModel | BadPrompt) -> PromptResponse:
        """A prompt that cannot start (no model set, a turn running) ends its turn with the reason said, as a
        failed turn does: a JSON-RPC error here leaves some clients' chats "in progress", the reason unseen."""
        reason = redact(str(exc))
        await self.update(session.id, update_agent_message_text(f"The prompt was not run: {reason}"))
        return PromptResponse(stop_reason="end_turn", field_meta={"refused": {"kind": type(exc).__name__, "message": reason}})

    async def finish(self, session: AcpSession, summary: TurnSummary) -> PromptResponse:
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

    async def pump(self, session: AcpSession, queue: asyncio.Queue[Event | None]) -> None:
        """Turn events, in order, as session updates (a slow client never blocks the turn)."""
        while (event := await queue.get()) is not None:
            try:
                await self.send_event(session, event)
            except Exception as exc:  # a client that went away: the turn goes on and is stored
                log.warning("session/update failed: %s", exc)
        # A failed call that got no notice (cancelled, or the turn stopped mid-batch) still ends, failed.
        while session.held:
            call_id = session.held.pop(0)
            try:
                update = tool_finished(call_id, False, session.outputs.get(call_id, ""))
                await self.update(session.id, named(update, session.started.get(call_id)))
            except Exception as exc:
                log.warning("session/update failed: %s", exc)

    async def send_event(self, session: AcpSession, event: Event) -> None:
        sid = session.id
        if isinstance(event, PermissionAsked):
            answer(event, lambda tool, question, call_id: self.ask(session, tool, question, call_id))
        elif isinstance(event, EditReviewAsked):
            answer_review(event, lambda asked: review(self.conn, sid, asked))
        elif isinstance(event, AssistantText):
            await self.update(sid, update_agent_message_text(redact(event.text)))
        elif isinstance(event, Reasoning):
            await self.update(sid, update_agent_thought_text(redact(event.text)))
        elif isinstance(event, ToolCallStarted):
            session.started[event.call_id] = tool_started(event, session.root)
            await self.update(sid, session.started[event.call_id])
        elif isinstance(event, ToolCallFinished):
            output = redact(event.output)
            session.outputs[event.call_id] = output
            if not event.ok:
                session.held.append(event.call_id)  # shown with its retry notice
                return
            await self.update(sid, named(tool_finished(event.call_id, True, output), session.started.get(event.call_id)))
            if event.tool == "todo_write":
                await self.update(sid, plan_update(session.core.todos))
        elif isinstance(event, Retry):
            if event.call_id in session.held:
                session.held.remove(event.call_id)
            update = tool_retried(event, session.outputs.get(event.call_id, redact(event.error)))
            await self.update(sid, named(update, session.started.get(event.call_id)))
        elif isinstance(event, LlmRetry):
            log.info("model request retried (attempt %s, %s ms): %s", event.attempt, event.delay_ms, event.cause)
        elif isinstance(event, Interrupt):
            log.info("turn interrupted: %s", event.reason.summary())
        elif isinstance(event, HookError):  # no ACP client shows the agent's log: said in the chat
            await self.update(
                sid, update_agent_message_text(f"\n\n(forge-lsp: {redact(format_hook_error(event.to_dict()))})\n\n")
            )
        elif isinstance(event, Reminder) and event.kind == "stopHook":
            line = reminder_line(event.text) or "a stop hook kept the turn going"
            await self.update(sid, update_agent_message_text(f"\n\n(forge-lsp: {redact(line)})\n\n"))

    async def ask(self, session: AcpSession, tool: str, question: str, call_id: str | None) -> str:
        """A confirm rule matched in the tool call call_id: session/request_permission (allow once, allow
        always, reject) about that call. Asked from the pump, as the question's event comes: the client was sent
        the tool_call before (a request before it would be about a call not shown yet).

        "Allow for this conversation" is answered "always": the session (core) remembers it for its conversation.
        """
        if self.conn is None:
            return "deny"
        call = ToolCallUpdate(tool_call_id=call_id or "forge-permission", title=redact(question))
        response = await self.conn.request_permission(session_id=session.id, tool_call=call, options=PERMISSION_OPTIONS)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
        return {ALLOW_ONCE: "allow", ALLOW_ALWAYS: "always"}.get(chosen or "", "deny")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.runtime.cancel():
            self.unwinding.setdefault(session.root, asyncio.Event())

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """session/close: its running turn cancelled, its MCP servers stopped; the conversation stays stored."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise invalid_params(f"no session {session_id!r}")
        if session.prompting:
            session.runtime.cancel()
        if session.mcp is not None:
            await session.mcp.close()
            session.mcp = session.core.mcp = None
        return CloseSessionResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def aclose(self) -> None:
        """The client went away: every session's MCP servers stop, and the workspaces' own."""
        self.config_files.close()
        servers = [s.mcp for s in self.sessions.values() if s.mcp is not None]
        await asyncio.gather(
            *(s.close() for s in servers), *(runtime.close_mcp(final=True) for runtime in self.workspaces), return_exceptions=True
        )

    def close(self) -> None:
        self.workspaces.close_all()


def modes_of(session: AcpSession) -> SessionModeState:
    """The session's modes: the agents (built-in, the user's, a trusted workspace's), its own the current one."""
    runtime = session.runtime
    available = [
        SessionMode(id=a.id, name=a.title or a.id, description=a.description or None) for a in runtime.agents.agents.all()
    ]
    return SessionModeState(current_mode_id=runtime.agent_of(session.core).id, available_modes=available)


def invalid_params(message: str) -> RequestError:
    """A request the client got wrong, with a message that says what (not a bare "Invalid params")."""
    return RequestError(-32602, message)


async def serve() -> int:
    """`forge-lsp acp`: serve ACP on stdin/stdout until the client closes it."""
    return await serve_stdio(ForgeAgent())
