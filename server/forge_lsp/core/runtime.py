"""One workspace's agent, the façade every frontend drives: config, trust, templates, state and
tools wired to the orchestrator, one turn at a time, for any of the workspace's sessions.

The language server, the ACP agent and the CLI all run turns through this (run(..., session=));
none constructs an orchestrator or touches the state store itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from forge_lsp.agents import LoadedAgents, load_agents, user_agents_dir
from forge_lsp.config import UNTRUSTED, ConfigLoader, ConfigProblem, EffectiveConfig
from forge_lsp.core import prompts
from forge_lsp.core.commands import Commands, Expansion, UnknownCommand
from forge_lsp.core.errors import NoModel, TurnInProgress, UnknownAgent, check_prompt
from forge_lsp.core.orchestrator import Emit, Orchestrator, TurnRequest
from forge_lsp.core.running import RunningCall
from forge_lsp.core.session import Ask, Session, deny_all
from forge_lsp.core.transcript import TranscriptWriter, append_note
from forge_lsp.core.turn_undo import TurnChanges, UndoRefused, UnknownTurn, describe, undo_turn
from forge_lsp.core.wording import GENERIC
from forge_lsp.domain.agents import DEFAULT_AGENT, Agent, not_available
from forge_lsp.domain.config import WORKSPACE_FILE, ForgeConfig
from forge_lsp.domain.events import Event, TurnFinished, TurnSummary
from forge_lsp.domain.messages import ChatMessage, ToolCall, ToolResult, Usage
from forge_lsp.domain.template_names import TURN_TEMPLATES
from forge_lsp.frontmatter import definitions
from forge_lsp.llm.litellm_adapter import LiteLLMModel
from forge_lsp.mcp_config import SERVER_NAME, McpSources, ServerSpec, acp_servers, load_servers, user_mcp_path
from forge_lsp.state.dirs import stored_state_file
from forge_lsp.state.store import StateStore
from forge_lsp.state.turn_files import TurnFiles
from forge_lsp.templates import TemplateEngine
from forge_lsp.tools.base import DiskFiles, FileStore, Snapshots, ToolContext, ToolDefinition, ToolFailure, read_regular
from forge_lsp.tools.mcp.manager import McpManager
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import PathOutsideWorkspace, Workspace
from forge_lsp.trust import (
    COMMANDS_DIR,
    MCP_FILE,
    TEMPLATES_DIR,
    TRUSTED_DIRS,
    EditorTrust,
    Survey,
    TrustStore,
    cannot_trust,
    refusal,
    save_keeps_trust,
    text_digest,
    unchanged_but,
    watched_files,
)

log = logging.getLogger(__name__)

UNDO_HINT = "To put them back as they were: Forge: Undo Last Turn, :ForgeUndoTurn {turn} or `forge-lsp undo --turn {turn}`."
"""The end of a transcript's "Files changed" section."""

MAX_INSTRUCTIONS_CHARS = 20_000
MAX_INSTRUCTIONS_BYTES = 10 * 1024 * 1024
"""A larger AGENTS.md is not read at all (its first MAX_INSTRUCTIONS_CHARS are used otherwise)."""


UNTRUSTED_MCP = "untrusted"
UNTRUSTED_MCP_REASON = "not started: the workspace is not trusted"


class BoundTools:
    """The tool port of one turn: the registry (the built-in tools and the MCP servers' tools) bound to the
    workspace's tool context, as the agent may use it.

    A tool the agent lacks is not offered to the model; a call to it anyway fails (the tracker counts it)."""

    def __init__(
        self, registry: ToolRegistry, ctx: ToolContext, mcp: list[McpManager] | None = None, *, agent: Agent | None = None
    ) -> None:
        self.registry = registry
        self._builtin = registry
        self.ctx = ctx
        self.mcp = mcp or []
        self.agent = agent

    def _shadowed(self, index: int) -> set[str]:
        """The server names of the managers after self.mcp[index]: a later source wins per name (an ACP
        session's own server shadows the user's or the workspace's of the same name)."""
        return {name for manager in self.mcp[index + 1 :] for name in manager.servers}

    async def prepare(self) -> None:
        """The MCP servers' tools, their servers started when first needed (at most [mcp] startup_timeout_secs)."""
        extra = [d for i, manager in enumerate(self.mcp) for d in await manager.tool_definitions(self._shadowed(i))]
        self._use(extra)

    async def refresh(self) -> None:
        """Before each request: a server that said its tools changed is listed again."""
        changed = False
        for manager in self.mcp:
            changed = await manager.refresh() or changed
        if changed:
            self._use([d for i, manager in enumerate(self.mcp) for d in manager.current(self._shadowed(i))])

    def _use(self, extra: list[ToolDefinition]) -> None:
        self.registry = ToolRegistry([*self._builtin.tools.values(), *extra]) if extra else self._builtin

    def schemas(self) -> list[dict[str, Any]]:
        allowed = set(self.names())
        return [s for s in self.registry.schemas() if s.get("function", s).get("name") in allowed]

    def names(self) -> list[str]:
        names = self.registry.names()
        return self.agent.filter(names) if self.agent is not None else names

    def refusal(self, call: ToolCall) -> str | None:
        """Why the agent may not make this call (a tool it lacks, a write outside its folders), or None."""
        agent = self.agent
        if agent is None or call.name not in self.registry.names():
            return None  # an unknown tool: the registry says so
        if not agent.allows(call.name):
            return not_available(call.name, agent.id)
        tool = self.registry.tools[call.name]
        if not agent.write_under or not tool.changes_files:
            return None
        if tool.path_arg is None:  # the shell, an MCP tool: what it changes is not known before it runs
            return agent.write_refused(call.name, None)
        raw = tool.target(call.arguments)
        if raw is None:
            return None  # no path given: the tool refuses its arguments itself
        try:
            rel = self.ctx.workspace.relative(self.ctx.workspace.resolve(raw))
        except PathOutsideWorkspace:
            return None  # the tool refuses it itself
        return agent.write_refused(call.name, rel)

    async def call(self, call: ToolCall) -> tuple[ToolResult, bool]:
        refused = self.refusal(call)
        if refused is not None:
            return ToolResult(call.id, call.name, refused, is_error=True), False
        self.ctx.call_id, self.ctx.tool = call.id, call.name
        try:
            return await self.registry.call(call, self.ctx)
        finally:
            self.ctx.call_id, self.ctx.tool = None, None

    def pending_todos(self) -> list[dict[str, str]]:
        return list(self.ctx.todos)


class WorkspaceRuntime:
    """Runs agent turns in one workspace, one at a time."""

    def __init__(
        self,
        root: Path,
        *,
        files: FileStore | None = None,
        ask: Ask = deny_all,
        user_config: Path | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        editor_settings: Any = None,
        trusted: bool | None = None,
        trust_store: TrustStore | None = None,
        editor_trust: EditorTrust | None = None,
    ) -> None:
        """trusted: the user's word for this process alone (`run --trust`), not recorded; None asks the
        user's trust store (`forge-lsp trust DIR`, forge.trust). editor_trust: the editor's own word (VS Code's
        workspace.isTrusted, Neovim's vim.secure of .forge.toml), recorded where it covers every trust-relevant
        file and the user has decided nothing here (TrustStore.adopt); the store decides from then on."""
        self.root = root.resolve()
        self.workspace = Workspace(self.root)
        self.session = Session(None, files or DiskFiles(), ask)
        """The workspace's own session: its current conversation (the language server's, the CLI's)."""
        self.sleep = sleep
        self.loader = ConfigLoader(self.root, user_config)
        self.loader.set_editor(editor_settings)
        self.trust_store = trust_store or TrustStore()
        self._client_trusted = trusted is True
        self._editor_trust = editor_trust
        if editor_trust is not None:
            try:
                self.trust_store.adopt(self.root, editor_trust)
            except Exception as exc:  # an unreadable store, a file that cannot be trusted: the store decides
                log.warning("trust store: %s", exc)
        self._trusted_files: dict[str, str] | None = None
        """Each trust-relevant file's digest when the store last said trusted (a user's save is checked against it)."""
        self._survey: Survey | None = None
        """The trust-relevant files as the last trust check found them."""
        self.effective: EffectiveConfig = self.loader.load(trusted=self._is_trusted())
        self.templates = TemplateEngine(self.root, overrides=self.trusted)
        self.registry = ToolRegistry()
        self.agents = LoadedAgents()
        self.reload_agents()
        self.commands = Commands()
        """The /commands in force: built-in, the user's, and a trusted workspace's .forge/commands."""
        self.reload_commands()
        self._store: StateStore | None = None
        self.snapshots = Snapshots()
        self._undoing: str | None = None
        """The turn forge.undoTurn is putting back (no turn starts meanwhile)."""
        self._task: asyncio.Task[TurnSummary] | None = None
        self.running_call = RunningCall()
        """The tool call the running turn is in, for what forge.cancel says it stopped."""
        self.turn_id: str | None = None
        self.transcript: TranscriptWriter | None = None
        self.last_errors: dict[str, int] = {}
        self.last_usage: Usage | None = None
        """The last turn's tokens and cost (forge.status usage.lastTurn)."""
        self.wording = GENERIC
        """How the client names its ways to trust and to set the model (the language server sets it)."""
        self.on_notice: Callable[[str], None] = log.warning
        """Told about state problems the user should see (a state file moved aside); the server shows them."""
        self.on_mcp_failure: Callable[[ServerSpec, str], None] = lambda spec, reason: self.on_notice(
            f"forge-lsp: MCP server {spec.name} failed: {reason} ({spec.where()})"
        )
        """Told once per failure of an MCP server (the server shows it and puts it on the entry)."""
        self.mcp_sources: McpSources = self._mcp_sources()
        self.mcp = McpManager({}, self.root, startup_timeout=self.config.mcp.startup_timeout_secs, trusted=lambda: self.trusted)
        """The MCP servers of the user's mcp.json, the editor's settings and a trusted workspace's .mcp.json."""
        self.mcp.on_failure = lambda spec, reason: self.on_mcp_failure(spec, reason)
        self.mcp.update(self.mcp_sources.servers)
        self._stopping: asyncio.Task[None] | None = None

    @property
    def config(self) -> ForgeConfig:
        """The effective config in force."""
        return self.effective.config

    @property
    def trusted(self) -> bool:
        """Whether the config and templates in force come from a trusted workspace."""
        return self.effective.trusted

    def _is_trusted(self) -> bool:
        """Trusted as the files are, or still so for a .forge.toml that no longer parses: its last good
        (trusted) config stays in force, as the problem says, while nothing else trust covers changed."""
        state = self.trust_state()
        if state == "trusted":
            return True
        if state != "changed" or not self.loader.last_good_trusted or self._trusted_files is None:
            return False
        found = self._survey
        if found is None:
            return False
        return unchanged_but(self.root, self._trusted_files, found, WORKSPACE_FILE) and not self.loader.workspace_parses()

    def trust_state(self) -> str:
        """ "trusted", "changed" (trusted once; a trust-relevant file changed since) or "untrusted".

        The client's word counts only for a workspace that can be trusted at all (the check
        `forge-lsp trust` makes: client_trust_refused says why not)."""
        if self._client_trusted and self.client_trust_refused() is None:
            return "trusted"
        try:
            state, found = self.trust_store.check(self.root)
        except Exception as exc:  # an unreadable store trusts nothing
            log.warning("trust store: %s", exc)
            return "untrusted"
        self._survey = found
        if state == "trusted" and found is not None:
            self._trusted_files = found.files
        elif state == "untrusted":
            self._trusted_files = None
        return state

    def user_files(self) -> tuple[list[Path], list[Path]]:
        """The user's files the config comes from (config.toml, mcp.json) and the folders of their agents and
        commands: a change in them means reading the config again."""
        user = self.loader.user_path
        return [user, user_mcp_path(user)], [user_agents_dir(user), user.parent / "commands"]

    def workspace_files(self) -> tuple[list[Path], list[Path]]:
        """The workspace's files trust covers (.forge.toml, .mcp.json, the scripts and every other file of the last
        trust check) and its .forge/ definition folders."""
        return watched_files(self.root, self._survey), [self.root / folder for folder in TRUSTED_DIRS]

    def refresh_trust(self) -> bool:
        """Before what trust allows (a turn, starting MCP servers): when the trust in force is no longer what the
        store and the files say (a trust-relevant file changed since the last check), the config is read again
        (True); the frontends' own check reports it within its round."""
        if not self.trust_changed():
            return False
        log.info("%s: its trust-relevant files or the trust store changed; config read again", self.root)
        self.reload_config()
        return True

    def trust_changed(self) -> bool:
        """The trust store says otherwise than the trust in force: the user ran `forge-lsp trust` (or
        --revoke) for this workspace elsewhere; reload_config applies it."""
        return self._is_trusted() != self.trusted

    def is_trust_file(self, path: Path) -> str | None:
        """path relative to the root when trust covers it: .forge.toml, .mcp.json, a template, an agent, a command,
        a trusted file (the script)."""
        try:
            rel = (path.parent.resolve() / path.name).relative_to(self.root).as_posix()
        except (OSError, RuntimeError, ValueError):
            return None
        if (
            rel in (WORKSPACE_FILE, MCP_FILE)
            or rel.startswith(tuple(folder.as_posix() + "/" for folder in TRUSTED_DIRS))
            or rel in (self._trusted_files or {})
        ):
            return rel
        return None

    def is_trusted_text(self, rel: str, text: str) -> bool:
        """Whether text is what rel held when the user last trusted the workspace."""
        return self._trusted_files is not None and self._trusted_files.get(rel) == text_digest(rel, text.encode())

    def keep_trust_after_save(self, rel: str, text: str) -> bool:
        """The user saved text to rel in the editor: when that is the only change since they trusted
        the workspace, record the trust again (True). Anything else changed, and it asks again."""
        if self._client_trusted or self._trusted_files is None:
            return False
        try:
            state, found = self.trust_store.check(self.root)
            if state != "changed" or found is None or not save_keeps_trust(self._trusted_files, found, rel, text.encode()):
                return False
            self.trust_store.trust(self.root, found)
        except Exception as exc:  # an unreadable store, a file that cannot be trusted: asked again
            log.warning("trust store: %s", exc)
            return False
        self._trusted_files = found.files
        log.info("%s: saved in the editor by the user; %s stays trusted", rel, self.root)
        return True

    def client_trust_refused(self) -> str | None:
        """Why the client's trust (VS Code's workspace.isTrusted, `run --trust`) does not apply: the
        workspace cannot be trusted as it is (see trust.refusal); None when it applies or was not given."""
        return cannot_trust(self.root) if self._client_trusted or self._editor_trust else None

    def set_trusted(self, trusted: bool) -> EffectiveConfig:
        """The user's decision (forge.trust, the Trust button): recorded, then config and templates reload."""
        if trusted:
            self.trust_store.trust(self.root)
        else:
            self.trust_store.revoke(self.root)
            self._client_trusted = False
        return self.reload_config()

    def untrusted_problems(self, model: str | None = None) -> list[ConfigProblem]:
        """Everything of the workspace ignored because it is not trusted: config keys and template overrides.

        model: the model a turn is given (forge-lsp run --model); the workspace's ignored model is then moot, left out.
        """
        if self.trusted:
            return []
        problems = [p for p in self.effective.ignored if not (model and p.key == "model")]
        problems += [p for p in self.mcp_sources.problems if p.code == UNTRUSTED]
        folder = self.root / TEMPLATES_DIR
        try:
            names = sorted(p.name for p in folder.glob("*.md")) if folder.is_dir() else []
        except OSError:
            names = []
        for name in names:
            message = "ignored because this workspace is not trusted: template overrides shape what the model is told"
            problems.append(ConfigProblem("workspace", "", f"{TEMPLATES_DIR / name}: {message}", folder / name, 1, UNTRUSTED))
        for path in definitions(self.root / COMMANDS_DIR):
            message = "ignored because this workspace is not trusted: a command is a prompt the model is sent"
            problems.append(ConfigProblem("workspace", "", f"{COMMANDS_DIR / path.name}: {message}", path, 1, UNTRUSTED))
        return problems + self.agents.ignored

    def config_problems(self) -> list[ConfigProblem]:
        """Each bad key or value and each file that does not parse (not what trust ignores), MCP entries', agent
        and command files included."""
        problems = self.effective.problems + self.mcp_sources.problems
        return [p for p in problems if p.code != UNTRUSTED] + self.agents.problems + self.commands.problems

    def reported_problems(self) -> list[ConfigProblem]:
        """What every frontend reports of the config in force: config_problems(), then everything
        ignored because the workspace is not trusted."""
        return self.config_problems() + self.untrusted_problems()

    def ignored_keys(self) -> list[str]:
        """The names of what an untrusted workspace had ignored (keys, template files), sorted, once each."""
        return sorted({p.key or (p.path.name if p.path else "") for p in self.untrusted_problems()})

    def has_state(self) -> bool:
        """Whether the workspace has state to read: open, or stored (self.store makes .forge/ where there is none)."""
        return self._store is not None or stored_state_file(self.root) is not None

    @property
    def store(self) -> StateStore:
        """The workspace's state, opened on first use (.forge/ is created only when needed).

        Opened with the trust in force then: a state file in .forge/ that this user's forge-lsp did not
        create is used only in a trusted workspace; trust granted later applies from the next start."""
        if self._store is None:
            self._store = StateStore(self.root, notify=lambda message: self.on_notice(message), trusted=self.trusted)
        return self._store

    def reload_config(self, editor_settings: Any = None, *, editor: bool = False) -> EffectiveConfig:
        """Read the config layers again (and the editor's settings when given)."""
        if editor:
            self.loader.set_editor(editor_settings)
        was_trusted = self.trusted
        self.effective = self.loader.load(trusted=self._is_trusted())
        if self.trusted != was_trusted:
            self.reload_templates()
        else:
            self.reload_agents()
            self.reload_commands()
        self._reload_mcp()
        return self.effective

    def reload_agents(self) -> LoadedAgents:
        """Read the user's and (trusted) the workspace's agent files again."""
        self.agents = load_agents(
            self.root, user_agents_dir(self.loader.user_path), trusted=self.trusted, known=self.templates.known()
        )
        return self.agents

    def _mcp_sources(self) -> McpSources:
        return load_servers(user_mcp_path(self.loader.user_path), self.loader.editor_raw, self.root, self.trusted)

    def _reload_mcp(self) -> None:
        """The MCP entries again: a server whose entry changed or went away stops now (in the background)."""
        self.mcp_sources = self._mcp_sources()
        self.mcp.startup_timeout = self.config.mcp.startup_timeout_secs
        stopped = self.mcp.update(self.mcp_sources.servers)
        if stopped:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._stopping = loop.create_task(self.mcp.stop(stopped))

    def session_mcp(self, servers: Any) -> McpManager:
        """A manager of an ACP session's own servers (session/new mcpServers), for that session only; the
        caller sets it as session.mcp and closes it when the session ends. Bad entries are logged."""
        sources = acp_servers(servers)
        for problem in sources.problems:
            log.warning("session MCP server: %s", problem)
        timeout = self.config.mcp.startup_timeout_secs
        return McpManager(sources.servers, self.root, startup_timeout=timeout, trusted=lambda: self.trusted)

    def mcp_status(self) -> list[dict[str, Any]]:
        """forge.status mcp: [{name, state, tools: N, reason?, source}], the untrusted workspace's servers too."""
        return sorted([*self.mcp.status(), *self.mcp_untrusted(0)], key=lambda s: s["name"])

    def mcp_describe(self) -> list[dict[str, Any]]:
        """forge.mcpServers and `forge-lsp mcp list`: each server's status with its tools, the untrusted too."""
        return sorted([*self.mcp.describe(), *self.mcp_untrusted([])], key=lambda s: s["name"])

    def mcp_untrusted(self, tools: Any) -> list[dict[str, Any]]:
        """The untrusted workspace's .mcp.json servers, listed and never started: state "untrusted" (a server of
        the same name from the user's own files runs instead, and is listed alone)."""
        # (the MCP sources' own problems: untrusted_problems() would also list .forge/templates on every forge.status)
        ignored = [p for p in self.mcp_sources.problems if p.code == UNTRUSTED and p.key.startswith("mcpServers.")]
        names = [p.key.split(".", 1)[1] for p in ignored]
        return [
            {"name": name, "state": UNTRUSTED_MCP, "source": "workspace", "tools": tools, "reason": UNTRUSTED_MCP_REASON}
            for name in dict.fromkeys(names)
            if name not in self.mcp.servers and SERVER_NAME.match(name)  # (a bad name is its entry's diagnostic alone)
        ]

    def preload_templates(self) -> None:
        """Compile the templates every turn needs (pybars3 is slow to import and compile)."""
        for name in TURN_TEMPLATES:
            try:
                self.templates.origin(name)
            except Exception as exc:  # reported again, with context, when a turn renders it
                log.warning("preloading %s: %s", name, exc)

    def reload_templates(self) -> list[str]:
        """Load .forge/templates/ again; returns the override errors."""
        self.templates = TemplateEngine(self.root, overrides=self.trusted)
        self.reload_agents()
        self.reload_commands()
        return self.templates.errors

    def reload_commands(self) -> Commands:
        """Read the user's and (trusted) the workspace's command files again (after the agents they name)."""
        self.commands = Commands.load(
            self.root, trusted=self.trusted, user=self.loader.user_path.parent / "commands", agents=self.agents.agents.ids()
        )
        return self.commands

    def expand_command(self, prompt: str) -> Expansion:
        """What a prompt runs: a /command's prompt (with its agent and model), or the prompt itself.

        UnknownCommand (a BadPrompt) for a /name no command has; BadPrompt when its template fails."""
        try:
            return self.commands.expand(prompt, self.templates)
        except UnknownCommand:
            if self.trust_state() != "changed":
                raise
            return self.commands.expand(prompt, self.templates, changed=True)  # raises, saying why it is ignored

    @property
    def running(self) -> bool:
        """True while a turn runs."""
        return self._task is not None and not self._task.done()

    def new_conversation(self) -> str:
        """Start a fresh conversation; the next turn will not see the old history."""
        if self.running:
            raise TurnInProgress("a turn is running; cancel it before starting a new conversation")
        self.session.reset()
        return self.store.new_conversation()

    def current_conversation(self) -> str:
        """The id of the conversation the workspace's own session continues (one is made if there is none)."""
        return self.store.current_conversation()

    def list_conversations(self) -> list[dict[str, Any]]:
        """forge.listConversations: [{id, title, turns, lastStatus, tokens, updated, turnFiles}], the latest
        first; turnFiles: [{turnId, files: [{path, action}], undone}] for each turn that changed files."""
        listed = self.store.conversations()
        touched = TurnFiles(self.store).by_conversation()
        for conversation in listed:
            conversation["turnFiles"] = touched.get(conversation["id"], [])
        return listed

    async def undo_turn(self, turn_id: str | None = None, session: Session | None = None) -> dict[str, Any]:
        """forge.undoTurn: put back every file turn_id (default: the workspace's last turn that changed files)
        changed, through the session's files (the editor's buffers). {turnId, files: [{path, action}]}.

        TurnInProgress while a turn runs (here or in another process); UndoRefused (nothing restored) when
        it was undone already or a file changed since; KeyError for an unknown turn."""
        if self.running:
            raise TurnInProgress(f"a turn is running in this workspace ({self.turn_id}); undo after it ends")
        table = TurnFiles(self.store)
        turn_id = turn_id or table.last_turn()
        if turn_id is None:
            raise UndoRefused("no turn in this workspace has changed files yet: nothing to undo")
        holder = self.store.turn_lock.acquire(f"(undoing turn {turn_id})")
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); undo after it ends")
        self._undoing = turn_id
        try:
            known = self.store.turn_status(turn_id) is not None
            try:
                restored = await undo_turn(table, self.workspace, (session or self.session).files, turn_id, known)
            except UnknownTurn:
                raise KeyError(turn_id) from None
            table.mark_undone(turn_id)
        finally:
            self._undoing = None
            self.store.turn_lock.release()
        words = ", ".join(f"{f['action']} {f['path']}" for f in restored) or "every file was already as before the turn"
        append_note(self.root, turn_id, f"## Undone\n\n{time.strftime('%Y-%m-%d %H:%M:%S')}: {words}\n")
        log.info("undid turn %s: %s", turn_id, words)
        return {"turnId": turn_id, "files": restored}

    def open_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Make a stored conversation current: the next turn continues it. KeyError when unknown."""
        if self.running:
            raise TurnInProgress("a turn is running; open another conversation after it ends")
        if not self.store.open_conversation(conversation_id):
            raise KeyError(conversation_id)
        self.session.reset()
        self.last_usage = None
        found = next((c for c in self.store.conversations() if c["id"] == conversation_id), {"title": "", "turns": 0})
        return {"conversationId": conversation_id, "title": found["title"], "turns": found["turns"]}

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete a stored conversation (messages, turns, compactions). Refused while a turn runs
        here or in another process; KeyError when unknown."""
        if self.running:
            raise TurnInProgress("a turn is running; delete conversations after it ends")
        holder = self.store.turn_lock.acquire("(deleting a conversation)")
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); delete after it ends")
        try:
            if not self.store.delete_conversation(conversation_id):
                raise KeyError(conversation_id)
        finally:
            self.store.turn_lock.release()
        return {"deleted": True, "conversationId": conversation_id}

    def compact(self) -> dict[str, Any]:
        """forge.compact: summarize the current conversation now, keeping retention_window messages.

        {beforeTokens, afterTokens, messages} (estimated tokens of the conversation's messages; messages:
        how many the summary replaced, 0 when nothing could be). The stored messages all stay.
        """
        if self.running:
            raise TurnInProgress("a turn is running; compact after it ends")
        from forge_lsp.core.compaction import Compactor, build_wire
        from forge_lsp.domain.tokens import estimate_tokens

        cid = self.store.current_conversation()
        history = self.store.history(cid)
        compactions = self.store.compactions(cid)
        result = Compactor(self.config.compact, self.templates, self.store).run(cid, [], history, compactions, force=True)
        if result is None:
            tokens = estimate_tokens(build_wire([], history, compactions))
            return {"beforeTokens": tokens, "afterTokens": tokens, "messages": 0}
        return result.to_dict()

    def cancel(self, turn_id: str | None = None) -> bool:
        """Cancel the running turn (if it is turn_id, when given); True if one was cancelled."""
        if not self.running or (turn_id and turn_id != self.turn_id):
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    async def turn_ended(self, timeout: float) -> None:
        """Wait until the running turn has ended (at most timeout seconds; at once when none runs)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task], timeout=timeout)

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
        return out

    def usage(self) -> dict[str, Any]:
        """forge.status usage: {lastTurn?, conversation} (tokens and cost of the current conversation's turns)."""
        out: dict[str, Any] = {}
        if self.last_usage is not None:
            out["lastTurn"] = self.last_usage.to_dict()
        try:
            # No state yet: nothing used, and reading would make .forge/ (forge.status in a plain repository).
            usage = self.store.conversation_usage(self.store.current_conversation()) if self.has_state() else Usage()
            out["conversation"] = usage.to_dict()
        except Exception as exc:  # a state problem is reported elsewhere; status still answers
            log.warning("usage: %s", exc)
        return out

    def no_model_message(self) -> str:
        """Where to set a model, for a turn asked for with none set anywhere."""
        elsewhere = f"your user config {self.loader.user_path}"
        if self.wording.model_setting:
            elsewhere += f" or {self.wording.model_setting}"
        ignored = [p for p in self.effective.ignored if p.key == "model"]
        if ignored:
            refused = refusal(self.root)
            fix = (
                f"it cannot be trusted as it is ({refused})"
                if refused is not None
                else f"trust it ({self.wording.trust.replace('DIR', str(self.root))})"
            )
            return (
                f"no model is set: this workspace's model in {self.loader.workspace_path} is ignored because the "
                f"workspace is not trusted; {fix}, or set a model in {elsewhere}"
            )
        if not self.loader.workspace_parses():
            return (
                f"no model is set: {self.loader.workspace_path} does not parse, so nothing in it applies (its error "
                f"says where); fix it, or set a model in {elsewhere}"
            )
        return (
            f'no model is set: add model = "provider/name" (e.g. "openai/gpt-4o" or "ollama/qwen3") to '
            f"{self.loader.workspace_path} or to {elsewhere}"
        )

    def instructions(self) -> str:
        """The workspace's AGENTS.md (or .forge/AGENTS.md), at most MAX_INSTRUCTIONS_CHARS (blocking: run it in a thread).

        Only a regular file inside the workspace: a link to a file elsewhere (~/.ssh/id_rsa)
        would send it to the model, and a FIFO would hang the turn.
        """
        for name in ("AGENTS.md", ".forge/AGENTS.md"):
            path = self.root / name
            if not os.path.lexists(path):
                continue
            try:
                if not path.resolve().is_relative_to(self.root):
                    raise ToolFailure(f"it points outside the workspace ({path.resolve()})")
                return read_regular(path, name, MAX_INSTRUCTIONS_BYTES)[:MAX_INSTRUCTIONS_CHARS]
            except (ToolFailure, OSError) as exc:
                self.on_notice(f"forge-lsp: {name} is not used: {exc}")
        return ""

    def _system_prompt(self, tools: BoundTools, instructions: str = "", agent: Agent | None = None) -> str:
        return prompts.system_prompt(self.templates, prompts.prompt_context(self.root, tools.names(), instructions), agent)

    # -- agents --------------------------------------------------------------

    def agent(self, agent_id: str) -> Agent:
        """The agent of that id in force; UnknownAgent naming the ones there are."""
        found = self.agents.agents.get(agent_id) if isinstance(agent_id, str) else None
        if found is None:
            why = ""
            named = [p for p in self.agents.ignored + self.agents.problems if p.path is not None and p.path.stem == agent_id]
            if named and named[0].code == UNTRUSTED:
                since = ": its files changed since you trusted it" if self.trust_state() == "changed" else ""
                why = f" ({named[0].path} is ignored: this workspace is not trusted{since})"
            elif named:
                why = f" ({named[0].path}:{named[0].line} is not loaded: {named[0].message})"
            raise UnknownAgent(f"unknown agent {agent_id!r}{why}; agents: {', '.join(self.agents.agents.ids())}")
        return found

    def agent_of(self, session: Session) -> Agent:
        """The agent a session's conversation uses (forge.setAgent, session/set_mode); forge when none was
        chosen, or when the chosen one is gone (its file removed, the workspace no longer trusted)."""
        # Nothing stored yet, nothing chosen: asking would make .forge/ (a turn refused at once, forge.status).
        stored = session.conversation_id is not None or self.has_state()
        chosen = self.store.conversation_agent(self.conversation_of(session)) if stored else None
        found = self.agents.agents.get(chosen) if chosen else None
        return found or self.agent(DEFAULT_AGENT)

    def set_agent(self, agent_id: str, session: Session | None = None) -> Agent:
        """forge.setAgent: the session's conversation uses this agent from its next turn (kept with it)."""
        agent = self.agent(agent_id)
        self.store.set_conversation_agent(self.conversation_of(session or self.session), agent.id)
        return agent

    def list_agents(self, session: Session | None = None) -> dict[str, Any]:
        """forge.listAgents: {agents: [{id, title, description, source, tools}], current}."""
        return {
            "agents": [a.summary() for a in self.agents.agents.all()],
            "current": self.agent_of(session or self.session).id,
        }

    def turn_config(self, agent: Agent) -> ForgeConfig:
        """The config of the agent's turns: the agent's limits and temperature win; the config fills the rest."""
        config = self.config
        return replace(
            config,
            max_tool_failure_per_turn=(
                agent.max_tool_failure_per_turn
                if agent.max_tool_failure_per_turn is not None
                else config.max_tool_failure_per_turn
            ),
            max_requests_per_turn=(
                agent.max_requests_per_turn if agent.max_requests_per_turn is not None else config.max_requests_per_turn
            ),
            temperature=agent.temperature if agent.temperature is not None else config.temperature,
        )

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
        """Run one turn of a session (the workspace's own when None) to its end, with agent (by id) or the
        session's conversation's agent; context: what the prompt carries from the editor ({file?, range?,
        unsaved?}, shown in the transcript and turnStarted).

        TurnInProgress if one runs in the workspace; BadPrompt (a ValueError) for a bad prompt; NoModel; UnknownAgent."""
        if self.running:
            raise TurnInProgress(f"a turn is already running in this workspace ({self.turn_id}); cancel it first")
        if self._undoing is not None:
            raise TurnInProgress(f"turn {self._undoing} is being undone in this workspace; run again when it is done")
        check_prompt(prompt)
        self.refresh_trust()
        session = session or self.session
        chosen = self.agent(agent) if agent is not None else self.agent_of(session)
        model = model or chosen.model or self.config.model
        if not model:
            raise NoModel(self.no_model_message())
        turn_id = turn_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:8]
        # Another process (a second editor, the CLI) may run a turn on the same conversation.
        holder = self.store.turn_lock.acquire(turn_id)
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); wait for it to end or cancel it")
        try:
            return await self._run_locked(prompt, emit, model, turn_id, session, chosen, context)
        finally:
            self.store.turn_lock.release()

    async def _run_locked(
        self,
        prompt: str,
        emit: Emit,
        model: str,
        turn_id: str,
        session: Session,
        agent: Agent,
        context: Mapping[str, Any] | None = None,
    ) -> TurnSummary:
        config = self.turn_config(agent)
        ctx = ToolContext(
            self.workspace,
            config,
            session.files,
            self.snapshots,
            session.todos,
            watch=self.store.watch_process,
            notice=lambda message: self.on_notice(message),
        )
        ctx.confirm = lambda tool, question: session.confirm(tool, question, ctx.call_id)
        turn_files = TurnFiles(self.store)
        turn_files.prune()
        ctx.changes = TurnChanges(turn_files, self.workspace, turn_id)
        tools = BoundTools(self.registry, ctx, [self.mcp, *([session.mcp] if session.mcp is not None else [])], agent=agent)
        await tools.prepare()
        llm = LiteLLMModel(config, self.root, model)
        llm.reasoning = agent.reasoning
        conversation = self.conversation_of(session)
        instructions = await asyncio.to_thread(self.instructions)
        variables = prompts.prompt_context(self.root, tools.names(), instructions)
        system_prompt = prompts.system_prompt(self.templates, variables, agent)
        orchestrator = Orchestrator(
            config,
            llm,
            tools,
            self.templates,
            self.store,
            sleep=self.sleep,
            system_prompt=system_prompt,
            workspace_context=prompts.workspace_context(self.templates, variables, system_prompt),
            files_changed=lambda turn: len(turn_files.files(turn)),
        )
        transcript = TranscriptWriter(self.root, turn_id)
        self.transcript = transcript
        self.turn_id = turn_id
        self.store.start_turn(turn_id, conversation, prompt)

        def fan_out(event: Event) -> None:
            self.running_call.see(event)
            try:
                if isinstance(event, TurnFinished) and (touched := turn_files.files(turn_id)):
                    transcript.note(f"## Files changed\n\n{describe(touched)}\n{UNDO_HINT.format(turn=turn_id)}\n")
                transcript.handle(event)
            except (OSError, sqlite3.Error) as exc:
                log.warning("transcript %s: %s", transcript.path, exc)
            emit(event)

        request = TurnRequest(turn_id, conversation, prompt, model, context=dict(context or {}), agent=agent.id)
        self._task = asyncio.ensure_future(orchestrator.run(request, fan_out))
        try:
            summary = await asyncio.shield(self._task)
        except asyncio.CancelledError:
            # The caller went away ($/cancelRequest): the turn is cancelled with it.
            self._task.cancel()
            summary = await self._task
        finally:
            transcript.close()
        self.store.finish_turn(turn_id, summary.status.value, summary.to_dict())
        self.last_usage = summary.usage
        self.last_errors = dict(summary.reason.errors) if summary.reason is not None and hasattr(summary.reason, "errors") else {}
        return summary

    # -- sessions ------------------------------------------------------------

    def conversation_of(self, session: Session) -> str:
        """The conversation a session's next turn continues; a session of its own makes it the current one."""
        if session.conversation_id is None:
            return self.store.current_conversation()
        self.store.select_conversation(session.conversation_id)
        return session.conversation_id

    def new_session(self, files: FileStore | None = None, ask: Ask = deny_all) -> Session:
        """A session of a new conversation (ACP's session/new)."""
        return Session(self.store.new_conversation(), files or DiskFiles(), ask)

    def load_session(self, conversation_id: str, files: FileStore | None = None, ask: Ask = deny_all) -> Session:
        """A session that resumes a stored conversation, its todo list as its last todo_write left it
        (ACP's session/load). KeyError when there is no such conversation."""
        if not self.store.select_conversation(conversation_id):
            raise KeyError(conversation_id)
        session = Session(conversation_id, files or DiskFiles(), ask)
        session.restore_todos(self.store.history(conversation_id))
        return session

    def history(self, session: Session) -> list[ChatMessage]:
        """Every stored message of the session's conversation, in order."""
        return self.store.history(self.conversation_of(session))

    async def close_mcp(self, *, final: bool = False) -> None:
        """Stop the MCP servers (shutdown, the workspace removed); a later turn starts them again, unless final
        (shutdown, the agent exiting: none starts again)."""
        await self.mcp.close(final=final)

    def close(self) -> None:
        """Cancel a running turn and close the state database (MCP servers: close_mcp; the guard ends them anyway)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self._store is not None:
            self._store.close()
            self._store = None
