"""The definitions in force in one workspace: its config, templates, agents, /commands and MCP servers, read
again when their files or the workspace's trust change."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from forge_lsp.agents import LoadedAgents, load_agents, user_agents_dir
from forge_lsp.config import UNTRUSTED, ConfigLoader, ConfigProblem, EffectiveConfig
from forge_lsp.core.commands import Commands, Expansion, UnknownCommand
from forge_lsp.core.errors import UnknownAgent
from forge_lsp.core.file_poll import Snapshot, changes, snapshot
from forge_lsp.core.trust_state import TrustState
from forge_lsp.domain.agents import Agent
from forge_lsp.domain.config import WORKSPACE_FILE, ForgeConfig
from forge_lsp.domain.template_names import TURN_TEMPLATES
from forge_lsp.frontmatter import definitions
from forge_lsp.mcp_config import SERVER_NAME, McpSources, ServerSpec, acp_servers, load_servers, user_mcp_path
from forge_lsp.templates import TemplateEngine
from forge_lsp.tools.mcp.manager import McpManager
from forge_lsp.trust import COMMANDS_DIR, MCP_FILE, TEMPLATES_DIR, TRUSTED_DIRS

log = logging.getLogger(__name__)

UNTRUSTED_MCP = "untrusted"
UNTRUSTED_MCP_REASON = "not started: the workspace is not trusted"


class Definitions:
    """The config, templates, agents, /commands and MCP servers in force, as the workspace's trust allows."""

    def __init__(
        self, root: Path, loader: ConfigLoader, trust: TrustState, on_mcp_failure: Callable[[ServerSpec, str], None]
    ) -> None:
        self.root = root
        self.loader = loader
        self.trust = trust
        self.read: Snapshot = self.config_files()
        """The config files as they were when the config in force was read (config_files())."""
        self.effective: EffectiveConfig = self.loader.load(trusted=trust.is_trusted())
        self.templates = TemplateEngine(self.root, overrides=self.trusted)
        self.agents = LoadedAgents()
        self.reload_agents()
        self.commands = Commands()
        """The /commands in force: built-in, the user's, and a trusted workspace's .forge/commands."""
        self.reload_commands()
        self.mcp_sources: McpSources = self._mcp_sources()
        self.mcp = McpManager({}, self.root, startup_timeout=self.config.mcp.startup_timeout_secs, trusted=lambda: self.trusted)
        """The MCP servers of the user's mcp.json, the editor's settings and a trusted workspace's .mcp.json."""
        self.mcp.on_failure = on_mcp_failure
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

    def user_files(self) -> tuple[list[Path], list[Path]]:
        """The user's files the config comes from (config.toml, mcp.json) and the folders of their agents and
        commands: a change in them means reading the config again."""
        user = self.loader.user_path
        return [user, user_mcp_path(user)], [user_agents_dir(user), user.parent / "commands"]

    def config_files(self) -> Snapshot:
        """The files the config in force is read from, each with its signature (core/file_poll.py): the user's
        (user_files()) and the workspace's .forge.toml, .mcp.json and .forge/ definitions."""
        files, folders = self.user_files()
        files += [self.root / WORKSPACE_FILE, self.root / MCP_FILE]
        return snapshot(files, folders + [self.root / folder for folder in TRUSTED_DIRS])

    def refresh_files(self) -> bool:
        """Before a prompt: when a config file changed since the config in force was read (saved a moment ago: the
        frontends' own check comes within its round), the config is read again (True), and the templates when one
        of them changed. `stat` only: the trust store's check is refresh_trust's, as the turn starts."""
        before, now = self.read, self.config_files()
        if now == before:
            return False
        log.info("%s: its config files changed on disk; config read again", self.root)
        self.reload_config()
        templates = self.root / TEMPLATES_DIR
        if any(path.parent == templates for path, _ in changes(before, now)):
            self.reload_templates()
        return True

    def refresh_trust(self) -> bool:
        """Before what trust allows (a turn, starting MCP servers): what refresh_files reads again, and when the
        trust in force is no longer what the store and the files say (a trust-relevant file changed since the last
        check), the config too (True); the frontends' own check reports it within its round."""
        if self.refresh_files():
            return True
        if not self.trust_changed():
            return False
        log.info("%s: its trust-relevant files or the trust store changed; config read again", self.root)
        self.reload_config()
        return True

    def trust_changed(self) -> bool:
        """The trust store says otherwise than the trust in force: the user ran `forge-lsp trust` (or
        --revoke) for this workspace elsewhere; reload_config applies it."""
        return self.trust.is_trusted() != self.trusted

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

    def reload_config(self, editor_settings: Any = None, *, editor: bool = False) -> EffectiveConfig:
        """Read the config layers again (and the editor's settings when given)."""
        if editor:
            self.loader.set_editor(editor_settings)
        was_trusted = self.trusted
        self.read = self.config_files()
        self.effective = self.loader.load(trusted=self.trust.is_trusted())
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
            if self.trust.state() != "changed":
                raise
            return self.commands.expand(prompt, self.templates, changed=True)  # raises, saying why it is ignored

    def agent(self, agent_id: str) -> Agent:
        """The agent of that id in force; UnknownAgent naming the ones there are."""
        found = self.agents.agents.get(agent_id) if isinstance(agent_id, str) else None
        if found is None:
            why = ""
            named = [p for p in self.agents.ignored + self.agents.problems if p.path is not None and p.path.stem == agent_id]
            if named and named[0].code == UNTRUSTED:
                since = ": its files changed since you trusted it" if self.trust.state() == "changed" else ""
                why = f" ({named[0].path} is ignored: this workspace is not trusted{since})"
            elif named:
                why = f" ({named[0].path}:{named[0].line} is not loaded: {named[0].message})"
            raise UnknownAgent(f"unknown agent {agent_id!r}{why}; agents: {', '.join(self.agents.agents.ids())}")
        return found

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
