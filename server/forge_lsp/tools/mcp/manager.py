"""A runtime's (or an ACP session's) MCP servers: started when first needed, all at once, never blocking a turn.

tool_definitions() starts every enabled server concurrently and waits at most [mcp]
startup_timeout_secs; what is ready then gives its tools, as ToolDefinitions the registry runs
(argument checks, tool_timeout_secs, failures in the same ToolErrorTracker). A server that fails
is reported once through on_failure (the editor shows it) and its tools are absent.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from forge_lsp.mcp_config import ServerSpec
from forge_lsp.redact import add_secrets, redact
from forge_lsp.tools.base import NobodyToAsk, ToolContext, ToolDefinition, ToolFailure, ToolOutput
from forge_lsp.tools.mcp import names
from forge_lsp.tools.mcp.content import result_text
from forge_lsp.tools.mcp.server import DISABLED, FAILED, READY, STOPPED, McpServer, ServerGone, one_line

log = logging.getLogger(__name__)

DEFAULT_STARTUP_SECS = 10.0


def _schema(tool: Any) -> dict[str, Any]:
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    schema = dict(schema) or {"type": "object"}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


class McpManager:
    """The MCP servers of one runtime or session, by name."""

    def __init__(
        self,
        specs: Mapping[str, ServerSpec],
        root: Path,
        *,
        startup_timeout: float = DEFAULT_STARTUP_SECS,
        trusted: Callable[[], bool] = lambda: False,
    ) -> None:
        self.root = root
        self.startup_timeout = startup_timeout
        self.trusted = trusted
        """Whether the workspace is trusted now: a stdio server starts in it only then (see server.working_folder)."""
        self.servers: dict[str, McpServer] = {}
        self.on_failure: Callable[[ServerSpec, str], None] = lambda spec, reason: None
        """Told once per failure: the server's entry, and why (the editor shows it)."""
        self.on_change: Callable[[], None] = lambda: None
        """Told when a server's state or tools change (forge.status, the editors' lists)."""
        self._reported: dict[str, str] = {}
        self._definitions: list[ToolDefinition] | None = None
        self.closed = False
        """Closed for good (the server shuts down, the agent exits): no server starts again."""
        self.update(specs)

    # -- configuration --------------------------------------------------------

    def update(self, specs: Mapping[str, ServerSpec]) -> list[McpServer]:
        """New entries: a server whose entry changed or went away is stopped (returned, to await their stop);
        a new or changed one starts when next needed."""
        stopped: list[McpServer] = []
        for name in list(self.servers):
            old = self.servers[name]
            new = specs.get(name)
            if new is None or new.identity() != old.spec.identity():
                stopped.append(self.servers.pop(name))
                self._reported.pop(name, None)
            elif new is not None:
                old.spec = new  # the same server; where it is set may have moved
        for name, spec in specs.items():
            if name not in self.servers:
                add_secrets(spec.secrets)
                self.servers[name] = self._fresh(spec)
        self._definitions = None
        if stopped:
            self._changed()
        return stopped

    def _changed(self) -> None:
        self._definitions = None
        for server in self.servers.values():
            if server.state == FAILED:
                self._report(server)
        try:
            self.on_change()
        except Exception:  # a frontend's listener must not break a server's task
            log.exception("on_change")

    def _report(self, server: McpServer) -> None:
        reason = server.reason or "failed"
        if self._reported.get(server.name) == reason:
            return
        self._reported[server.name] = reason
        try:
            self.on_failure(server.spec, reason)
        except Exception:
            log.exception("on_failure")

    # -- starting -------------------------------------------------------------

    def start_all(self, skip: Collection[str] = ()) -> list[McpServer]:
        """Start every enabled server not started yet (but those named in skip); the ones starting now."""
        if self.closed:  # a request that came in while shutting down: nothing starts again
            return []
        for server in self.servers.values():
            if server.name not in skip:
                server.start(self.startup_timeout)
        return [s for s in self.servers.values() if s.state == "starting" and s.name not in skip]

    async def wait_started(self, skip: Collection[str] = ()) -> None:
        """Start them all (if not yet) and wait until each is ready or failed, at most startup_timeout.
        skip: names shadowed for the caller (an ACP session's own servers of those names): not started for it."""
        starting = self.start_all(skip)
        if starting:
            await asyncio.gather(*(s.wait_ready(self.startup_timeout + 0.5) for s in starting))
        self.report_failures(skip)

    def report_failures(self, skip: Collection[str] = ()) -> None:
        """Each failed server through on_failure, once per reason (a ${NAME} not set, before any start)."""
        for server in self.servers.values():
            if server.state == FAILED and server.name not in skip:
                self._report(server)

    async def tool_definitions(self, skip: Collection[str] = ()) -> list[ToolDefinition]:
        """The tools of every ready server, as the model will see them (servers started when first needed);
        none of the servers named in skip."""
        await self.wait_started(skip)
        await self.refresh()
        return self.current(skip)

    async def refresh(self) -> bool:
        """List again the tools of servers that said theirs changed; True when any did (or another server's state
        changed the tools since they were last given)."""
        changed = await asyncio.gather(*(s.refresh() for s in self.servers.values() if s.stale))
        if any(changed):
            self._definitions = None
        return any(changed) or self._definitions is None  # None: a server failed or stopped since

    def current(self, skip: Collection[str] = ()) -> list[ToolDefinition]:
        """The definitions as they are now (no waiting): what the model is given on the next request; none of
        the servers named in skip."""
        if any(name in self.servers for name in skip):
            return self._build(skip)
        if self._definitions is None:
            self._definitions = self._build()
        return self._definitions

    def _build(self, skip: Collection[str] = ()) -> list[ToolDefinition]:
        ready = [s for s in sorted(self.servers.values(), key=lambda s: s.name) if s.state == READY and s.name not in skip]
        pairs = [(s.name, t.name) for s in ready for t in s.tools]
        assigned = names.assign(pairs)
        out: list[ToolDefinition] = []
        for server in ready:
            for tool in server.tools:
                name = assigned[(server.name, tool.name)]
                description = (tool.description or tool.title or f"{tool.name} (MCP server {server.name})").strip()
                # A server's tool may change any file unless it says it only reads (MCP's readOnlyHint).
                read_only = getattr(getattr(tool, "annotations", None), "read_only_hint", None) is True
                run = self._runner(server.name, tool.name, name)
                out.append(ToolDefinition(name, description[:4000], _schema(tool), run, changes_files=not read_only))
        return out

    def _runner(self, server_name: str, tool: str, exposed: str) -> Callable[[Mapping[str, Any], ToolContext], Any]:
        async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
            return await self.call(server_name, tool, exposed, dict(args), ctx)

        return run

    # -- calls ----------------------------------------------------------------

    async def call(self, server_name: str, tool: str, exposed: str, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call one tool; every way it can fail is a ToolFailure (the registry makes it the model's error)."""
        await self._confirm(exposed, server_name, tool, ctx)
        server = self.servers.get(server_name)
        if server is None:
            raise ToolFailure(f"the MCP server {server_name} is no longer configured")
        try:
            result = await server.call(tool, args)
        except ServerGone as exc:
            raise ToolFailure(f"MCP server {server_name} is not running: {exc}") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a protocol error, a dead server
            reason = redact(one_line(exc))  # an HTTP error names the url, which a ${NAME} may have filled in
            if server.session is not None and _connection_lost(exc):
                server.mark_dead(f"it exited or closed the connection during a call ({reason})")
            raise ToolFailure(f"MCP server {server_name}: {tool} failed: {reason}") from None
        cfg = ctx.config
        from forge_lsp.tools.shell import truncate

        text = truncate(result_text(result), cfg.max_stdout_prefix_lines, cfg.max_stdout_suffix_lines, cfg.max_stdout_line_chars)
        if getattr(result, "is_error", False):
            raise ToolFailure(f"MCP server {server_name}: {tool} returned an error: {text}")
        return ToolOutput(text)

    async def _confirm(self, exposed: str, server_name: str, tool: str, ctx: ToolContext) -> None:
        rules = [p for p in ctx.config.mcp.confirm if fnmatch.fnmatchcase(exposed, p)]
        if not rules:
            return
        question = f"Allow the MCP tool {tool} of the server {server_name} ({exposed})?"
        try:
            allowed = await ctx.confirm(exposed, question)
        except NobodyToAsk:
            raise ToolFailure(
                f"not run: {exposed} matches [mcp] confirm {rules[0]!r}, so it needs the user's yes, and nobody can be "
                "asked here (forge-lsp run asks only in a terminal)"
            ) from None
        if not allowed:
            raise ToolFailure(f"the user denied calling {exposed} ([mcp] confirm {rules[0]!r})")

    # -- status and control ---------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """[{name, state, tools: N, reason?, source}] by name."""
        return [s.status() for s in sorted(self.servers.values(), key=lambda s: s.name)]

    def describe(self) -> list[dict[str, Any]]:
        """forge.mcpServers: each server's status with its tools [{name, description}] as the model sees them."""
        assigned = names.assign((s.name, t.name) for s in self.servers.values() if s.state == READY for t in s.tools)
        out = []
        for status in self.status():
            server = self.servers[status["name"]]
            tools = (
                [{"name": assigned[(server.name, t.name)], "description": (t.description or "").strip()} for t in server.tools]
                if server.state == READY
                else []
            )
            out.append({**status, "tools": tools})
        return out

    async def restart(self, name: str) -> dict[str, Any]:
        """Stop and start one server again (a failed one too); its status once ready or failed. KeyError if unknown."""
        server = self.servers[name]
        await server.stop()
        self._reported.pop(name, None)
        fresh = self.servers[name] = self._fresh(server.spec)
        self._definitions = None
        if fresh.state == STOPPED and not self.closed:
            fresh.start(self.startup_timeout)
            await fresh.wait_ready(self.startup_timeout + 0.5)
        self._changed()
        return fresh.status()

    async def stop(self, stopped: Iterable[McpServer]) -> None:
        """Wait for servers update() took out to stop."""
        await asyncio.gather(*(s.stop() for s in stopped), return_exceptions=True)

    async def close(self, *, final: bool = False) -> None:
        """Stop every server (shutdown, the workspace removed, the session ended); one needed later starts again,
        unless final (the server shuts down: a request still being answered must not start them again)."""
        self.closed = self.closed or final
        servers = list(self.servers.values())
        self.servers = {name: self._fresh(server.spec) for name, server in self.servers.items()}
        self._reported.clear()
        self._definitions = None
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)

    def _fresh(self, spec: ServerSpec) -> McpServer:
        server = McpServer(spec, self.root, self.trusted)
        server.on_change = self._changed
        return server

    def any_failed(self) -> bool:
        return any(s.state == FAILED for s in self.servers.values())

    def enabled(self) -> bool:
        return any(s.state != DISABLED for s in self.servers.values())


def _connection_lost(exc: BaseException) -> bool:
    import anyio

    text = one_line(exc).lower()
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | EOFError | ConnectionError) or (
        "connection closed" in text or "closed" in text and "connection" in text
    )
