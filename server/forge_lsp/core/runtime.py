"""One workspace's agent, the façade every frontend drives: config, trust, templates, state and
tools wired to the orchestrator, one turn at a time, for any of the workspace's sessions.

The language server, the ACP agent and the CLI all run turns through this: accept(PromptRequest) and
prompt(accepted, emit) (core/pipeline.py); none constructs an orchestrator or touches the state store itself. Each part owns its own state:
trust (core/trust_state.py), the definitions in force: config, templates, agents, commands, MCP servers
(core/definitions.py), the conversations and their store (core/conversations.py), the turn (core/turn.py)
and a turn's tool port (core/tool_port.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from forge_lsp.agents import LoadedAgents
from forge_lsp.config import ConfigLoader, ConfigProblem, EffectiveConfig
from forge_lsp.core import prompts
from forge_lsp.core.commands import Commands, Expansion
from forge_lsp.core.conversations import Conversations
from forge_lsp.core.definitions import UNTRUSTED_MCP as UNTRUSTED_MCP
from forge_lsp.core.definitions import UNTRUSTED_MCP_REASON as UNTRUSTED_MCP_REASON
from forge_lsp.core.definitions import Definitions
from forge_lsp.core.editor_check import DiagnosticsPort
from forge_lsp.core.errors import TurnInProgress
from forge_lsp.core.orchestrator import Emit
from forge_lsp.core.pipeline import Accepted, PromptRequest, accept, run
from forge_lsp.core.running import RunningCall
from forge_lsp.core.session import Session
from forge_lsp.core.tool_port import BoundTools as BoundTools
from forge_lsp.core.transcript import TranscriptWriter
from forge_lsp.core.trust_state import TrustState
from forge_lsp.core.turn import MAX_INSTRUCTIONS_BYTES as MAX_INSTRUCTIONS_BYTES
from forge_lsp.core.turn import MAX_INSTRUCTIONS_CHARS as MAX_INSTRUCTIONS_CHARS
from forge_lsp.core.turn import UNDO_HINT as UNDO_HINT
from forge_lsp.core.turn import Turns
from forge_lsp.core.wording import GENERIC, Wording
from forge_lsp.domain.agents import DEFAULT_AGENT, Agent
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import TurnSummary
from forge_lsp.domain.messages import ChatMessage, Usage
from forge_lsp.mcp_config import McpSources, ServerSpec
from forge_lsp.state.store import StateStore
from forge_lsp.templates import TemplateEngine
from forge_lsp.tools.base import DiskFiles, FileStore, Snapshots
from forge_lsp.tools.mcp.manager import McpManager
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace
from forge_lsp.trust import EditorTrust, TrustStore

log = logging.getLogger(__name__)


class WorkspaceRuntime:
    """Runs agent turns in one workspace, one at a time."""

    def __init__(
        self,
        root: Path,
        *,
        files: FileStore | None = None,
        user_config: Path | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        editor_settings: Any = None,
        trusted: bool | None = None,
        trust_store: TrustStore | None = None,
        editor_trust: EditorTrust | None = None,
        wording: Wording = GENERIC,
        on_notice: Callable[[str], None] = log.warning,
        on_mcp_failure: Callable[[ServerSpec, str], None] | None = None,
        diagnostics: DiagnosticsPort | None = None,
    ) -> None:
        """trusted: the user's word for this process alone (`run --trust`), not recorded; None asks the
        user's trust store (`forge-lsp trust DIR`, forge.trust). editor_trust: the editor's own word (VS Code's
        workspace.isTrusted, Neovim's vim.secure of .forge.toml), recorded where it covers every trust-relevant
        file and the user has decided nothing here (TrustStore.adopt); the store decides from then on.

        The frontend's ports, given as it opens the workspace: wording (how it names its ways to trust and to
        set the model), on_notice (state problems the user should see), on_mcp_failure (once per failure of an
        MCP server; None: said through on_notice), diagnostics (the editor's diagnostics of the files a turn edits,
        core/editor_check.py; None: no editor, nothing checked)."""
        self.root = root.resolve()
        self.workspace = Workspace(self.root)
        self.session = Session(None, files or DiskFiles())
        """The workspace's own session: its current conversation (the language server's, the CLI's)."""
        self.sleep = sleep
        self.wording = wording
        """How the client names its ways to trust and to set the model."""
        self.on_notice = on_notice
        """Told about state problems the user should see (a state file moved aside); the server shows them."""
        self.on_mcp_failure: Callable[[ServerSpec, str], None] = on_mcp_failure or (
            lambda spec, reason: self.on_notice(f"forge-lsp: MCP server {spec.name} failed: {reason} ({spec.where()})")
        )
        """Told once per failure of an MCP server (the server shows it and puts it on the entry)."""
        self.diagnostics = diagnostics
        """The editor's diagnostics of a file (the language server's forge/diagnostics); None: ACP, the CLI."""
        self.loader = ConfigLoader(self.root, user_config)
        self.loader.set_editor(editor_settings)
        self.trust = TrustState(self.root, self.loader, trusted=trusted, trust_store=trust_store, editor_trust=editor_trust)
        self.definitions = Definitions(self.root, self.loader, self.trust, lambda spec, reason: self.on_mcp_failure(spec, reason))
        self.registry = ToolRegistry()
        self.conversations = Conversations(self.root, self.definitions, lambda message: self.on_notice(message))
        self.snapshots = Snapshots()
        self.turns = Turns(self)

    # -- trust (core/trust_state.py) -------------------------------------------

    @property
    def trust_store(self) -> TrustStore:
        """The user's trust store."""
        return self.trust.store

    def trust_state(self) -> str:
        """ "trusted", "changed" (trusted once; a trust-relevant file changed since) or "untrusted"."""
        return self.trust.state()

    def untrusted_since(self) -> str:
        """Why a workspace once trusted is not, for "X is not trusted{since}": its files changed since, or the user
        revoked its trust (forge-lsp trust --revoke, forge.trust {revoke}) and has not trusted it again; else ""."""
        if self.trust_state() == "changed":
            return " (its files changed since you trusted it)"
        return " (you revoked its trust)" if self.trust.store.revoked(self.root) else ""

    def workspace_files(self) -> tuple[list[Path], list[Path]]:
        return self.trust.workspace_files()

    def is_trust_file(self, path: Path) -> str | None:
        return self.trust.is_trust_file(path)

    def is_trusted_text(self, rel: str, text: str) -> bool:
        return self.trust.is_trusted_text(rel, text)

    def keep_trust_after_save(self, rel: str, text: str) -> bool:
        return self.trust.keep_trust_after_save(rel, text)

    def client_trust_refused(self) -> str | None:
        return self.trust.client_trust_refused()

    def set_trusted(self, trusted: bool) -> EffectiveConfig:
        """The user's decision (forge.trust, the Trust button): recorded, then config and templates reload."""
        self.trust.record(trusted)
        return self.reload_config()

    # -- the definitions in force (core/definitions.py) -----------------------

    @property
    def effective(self) -> EffectiveConfig:
        """The config in force, with its sources and problems."""
        return self.definitions.effective

    @property
    def config(self) -> ForgeConfig:
        """The effective config in force."""
        return self.definitions.config

    @property
    def trusted(self) -> bool:
        """Whether the config and templates in force come from a trusted workspace."""
        return self.definitions.trusted

    @property
    def templates(self) -> TemplateEngine:
        return self.definitions.templates

    @property
    def agents(self) -> LoadedAgents:
        return self.definitions.agents

    @property
    def commands(self) -> Commands:
        """The /commands in force: built-in, the user's, and a trusted workspace's .forge/commands."""
        return self.definitions.commands

    @property
    def mcp_sources(self) -> McpSources:
        return self.definitions.mcp_sources

    @property
    def mcp(self) -> McpManager:
        """The MCP servers of the user's mcp.json, the editor's settings and a trusted workspace's .mcp.json."""
        return self.definitions.mcp

    def user_files(self) -> tuple[list[Path], list[Path]]:
        return self.definitions.user_files()

    def refresh_files(self) -> bool:
        return self.definitions.refresh_files()

    def refresh_trust(self) -> bool:
        return self.definitions.refresh_trust()

    def trust_changed(self) -> bool:
        return self.definitions.trust_changed()

    def untrusted_problems(self, model: str | None = None) -> list[ConfigProblem]:
        return self.definitions.untrusted_problems(model)

    def config_problems(self) -> list[ConfigProblem]:
        return self.definitions.config_problems()

    def reported_problems(self) -> list[ConfigProblem]:
        return self.definitions.reported_problems()

    def ignored_keys(self) -> list[str]:
        return self.definitions.ignored_keys()

    def reload_config(self, editor_settings: Any = None, *, editor: bool = False) -> EffectiveConfig:
        return self.definitions.reload_config(editor_settings, editor=editor)

    def reload_agents(self) -> LoadedAgents:
        return self.definitions.reload_agents()

    def reload_templates(self) -> list[str]:
        return self.definitions.reload_templates()

    def reload_commands(self) -> Commands:
        return self.definitions.reload_commands()

    def preload_templates(self) -> None:
        self.definitions.preload_templates()

    def expand_command(self, prompt: str) -> Expansion:
        return self.definitions.expand_command(prompt)

    def session_mcp(self, servers: Any) -> McpManager:
        return self.definitions.session_mcp(servers)

    def mcp_status(self) -> list[dict[str, Any]]:
        return self.definitions.mcp_status()

    def mcp_describe(self) -> list[dict[str, Any]]:
        return self.definitions.mcp_describe()

    def mcp_untrusted(self, tools: Any) -> list[dict[str, Any]]:
        return self.definitions.mcp_untrusted(tools)

    def agent(self, agent_id: str) -> Agent:
        """The agent of that id in force; UnknownAgent naming the ones there are."""
        return self.definitions.agent(agent_id)

    def turn_config(self, agent: Agent) -> ForgeConfig:
        return self.definitions.turn_config(agent)

    def list_agents(self, session: Session | None = None) -> dict[str, Any]:
        """forge.listAgents: {agents: [{id, title, description, source, tools}], current}."""
        return {
            "agents": [a.summary() for a in self.agents.agents.all()],
            "current": self.agent_of(session or self.session).id,
        }

    # -- conversations and their state (core/conversations.py) ----------------

    @property
    def store(self) -> StateStore:
        """The workspace's state, opened on first use (.forge/ is created only when needed)."""
        return self.conversations.store

    @property
    def _store(self) -> StateStore | None:
        """The state store when it is open (None before first use and after close)."""
        return self.conversations._store

    def has_state(self) -> bool:
        return self.conversations.has_state()

    def conversation_of(self, session: Session) -> str:
        return self.conversations.conversation_of(session)

    def new_session(self, files: FileStore | None = None) -> Session:
        return self.conversations.new_session(files)

    def load_session(self, conversation_id: str, files: FileStore | None = None) -> Session:
        return self.conversations.load_session(conversation_id, files)

    def history(self, session: Session) -> list[ChatMessage]:
        return self.conversations.history(session)

    def agent_of(self, session: Session) -> Agent:
        return self.conversations.agent_of(session)

    def set_agent(self, agent_id: str, session: Session | None = None) -> Agent:
        """forge.setAgent: the session's conversation uses this agent from its next turn (kept with it)."""
        return self.conversations.set_agent(agent_id, session or self.session)

    def current_conversation(self) -> str:
        """The id of the conversation the workspace's own session continues (one is made if there is none)."""
        return self.store.current_conversation()

    def list_conversations(self) -> list[dict[str, Any]]:
        return self.conversations.list_conversations()

    def new_conversation(self) -> str:
        """Start a fresh conversation; the next turn will not see the old history."""
        if self.running:
            raise TurnInProgress("a turn is running; cancel it before starting a new conversation")
        self.session.reset()
        return self.store.new_conversation()

    def open_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Make a stored conversation current: the next turn continues it. KeyError when unknown."""
        if self.running:
            raise TurnInProgress("a turn is running; open another conversation after it ends")
        opened = self.conversations.open_conversation(conversation_id)
        self.session.reset()
        self.turns.last_usage = None
        return opened

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete a stored conversation. Refused while a turn runs here or in another process; KeyError when unknown."""
        if self.running:
            raise TurnInProgress("a turn is running; delete conversations after it ends")
        return self.conversations.delete_conversation(conversation_id)

    # -- the turn (core/turn.py) ------------------------------------------------

    @property
    def running(self) -> bool:
        """True while a turn runs."""
        return self.turns.running

    @property
    def running_call(self) -> RunningCall:
        """The tool call the running turn is in, for what forge.cancel says it stopped."""
        return self.turns.running_call

    @property
    def turn_id(self) -> str | None:
        return self.turns.turn_id

    @property
    def transcript(self) -> TranscriptWriter | None:
        return self.turns.transcript

    @property
    def last_errors(self) -> dict[str, int]:
        return self.turns.last_errors

    @property
    def last_usage(self) -> Usage | None:
        """The last turn's tokens and cost (forge.status usage.lastTurn)."""
        return self.turns.last_usage

    def accept(self, request: PromptRequest) -> Accepted:
        """A prompt checked, its /command expanded, no turn running here: see core/pipeline.py accept."""
        return accept(self, request)

    async def prompt(self, accepted: Accepted, emit: Emit) -> TurnSummary:
        """Run an accepted prompt, its events to emit in order: see core/pipeline.py run."""
        return await run(self, accepted, emit)

    async def run(
        self,
        prompt: str,
        emit: Emit,
        model: str | None = None,
        turn_id: str | None = None,
        *,
        session: Session | None = None,
        context: Mapping[str, Any] | None = None,
        agent: str | None = None,
    ) -> TurnSummary:
        """Run one turn of a session (the workspace's own when None): see Turns.run."""
        return await self.turns.run(prompt, emit, model, turn_id, session=session, context=context, agent=agent)

    def cancel(self, turn_id: str | None = None) -> bool:
        """Cancel the running turn (if it is turn_id, when given); True if one was cancelled."""
        return self.turns.cancel(turn_id)

    async def turn_ended(self, timeout: float) -> None:
        await self.turns.turn_ended(timeout)

    async def undo_turn(
        self, turn_id: str | None = None, session: Session | None = None, emit: Emit | None = None
    ) -> dict[str, Any]:
        return await self.turns.undo_turn(turn_id, session, emit)

    def compact(self) -> dict[str, Any]:
        return self.turns.compact()

    def usage(self) -> dict[str, Any]:
        return self.turns.usage()

    def no_model_message(self) -> str:
        return self.turns.no_model_message()

    def instructions(self) -> str:
        return self.turns.instructions()

    def _system_prompt(self, tools: BoundTools, instructions: str = "", agent: Agent | None = None) -> str:
        return prompts.system_prompt(self.templates, prompts.prompt_context(self.root, tools.names(), instructions), agent)

    def status(self) -> dict[str, Any]:
        """forge.status: whether a turn runs, the model, the limit and the failure counts."""
        out: dict[str, Any] = {
            "running": self.running,
            "model": self.config.model,
            "modelSource": self.effective.sources.get("model", "default"),
            "limit": self.config.max_tool_failure_per_turn,
            "errors": dict(self.last_errors),
            "trusted": self.trusted,
            "trust": self.trust_state(),
        }
        try:
            out["agent"] = self.agent_of(self.session).id
        except Exception as exc:  # a state problem is reported elsewhere; status still answers
            log.warning("agent: %s", exc)
            out["agent"] = DEFAULT_AGENT
        if self.running:
            out["turnId"] = self.turn_id
        out["usage"] = self.usage()
        out["mcp"] = self.mcp_status()
        out["verify"] = self.verify_status()
        return out

    def verify_status(self) -> dict[str, Any]:
        """forge.status verify: {diagnostics, editor, reason?}: whether the agent's edits are checked against the
        editor's diagnostics ([verify] diagnostics, and whether this editor can give them)."""
        why = self.diagnostics.unavailable() if self.diagnostics is not None else "no editor (ACP, the CLI)"
        out: dict[str, Any] = {"diagnostics": self.config.verify.diagnostics, "editor": why is None}
        if why is not None:
            out["reason"] = why
        return out

    async def close_mcp(self, *, final: bool = False) -> None:
        """Stop the MCP servers (shutdown, the workspace removed); a later turn starts them again, unless final
        (shutdown, the agent exiting: none starts again)."""
        await self.mcp.close(final=final)

    def close(self) -> None:
        """Cancel a running turn and close the state database (MCP servers: close_mcp; the guard ends them anyway)."""
        self.turns.close()
        self.conversations.close()
