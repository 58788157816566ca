"""The tool port of a turn: the workspace's tools (built-in and MCP) as one agent may use them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forge_lsp.domain.agents import Agent, not_available
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools.base import ToolContext, ToolDefinition
from forge_lsp.tools.mcp.manager import McpManager
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import PathOutsideWorkspace

if TYPE_CHECKING:
    from forge_lsp.core.editor_check import EditChecks


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
        self.checks: EditChecks | None = None
        """The turn's checks of its edits against the editor's diagnostics (core/editor_check.py); None: none."""

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
            if self.checks is not None:
                return await self.checks.run(call, lambda: self.registry.call(call, self.ctx))
            return await self.registry.call(call, self.ctx)
        finally:
            self.ctx.call_id, self.ctx.tool = None, None

    def pending_todos(self) -> list[dict[str, str]]:
        return list(self.ctx.todos)
