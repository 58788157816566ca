"""A workspace's MCP servers in the editor: a failure shown once (message, diagnostic on its mcp.json entry),
forge.mcpServers and forge.restartMcpServer, and the servers stopped when the workspace goes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams

from forge_lsp.lsp import convert
from forge_lsp.lsp.language_server import ForgeLanguageServer
from forge_lsp.redact import redact, redact_data

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.mcp_config import ServerSpec

MCP_SOURCE = "forge.mcp"
FAILED_CODE = "mcp-server-failed"
_published: dict[Path, set[str]] = {}
"""The mcp.json documents each workspace has failure diagnostics on."""


def wire(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> None:
    """Report the runtime's MCP failures in the editor."""
    runtime.on_mcp_failure = lambda spec, reason: failed(ls, runtime, spec, reason)
    runtime.mcp.on_change = lambda: publish(ls, runtime)
    runtime.mcp.report_failures()  # failed as configured (a ${NAME} not set): said now


def failed(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, spec: ServerSpec, reason: str) -> None:
    """Once per failure: a message naming the server, why, and where it is set; the diagnostic on its entry."""
    message = redact(f"Forge: MCP server {spec.name} failed: {reason} ({spec.where()}); its tools are not available")
    ls.log(message, t.MessageType.Warning)
    ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))
    publish(ls, runtime)


def publish(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> None:
    """A Warning on each failed server's entry in its mcp.json (none left where it is no longer failed)."""
    by_uri: dict[str, list[t.Diagnostic]] = {}
    for status in runtime.mcp.status():
        server = runtime.mcp.servers.get(status["name"])
        if status["state"] != "failed" or server is None or server.spec.path is None:
            continue
        diag = t.Diagnostic(
            range=convert.line_range((server.spec.line or 1) - 1),
            message=redact(f"MCP server {server.name} failed: {status.get('reason', 'failed')}"),
            severity=t.DiagnosticSeverity.Warning,
            source=convert.SOURCE,
            code=FAILED_CODE,
        )
        by_uri.setdefault(server.spec.path.as_uri(), []).append(diag)
    for uri in _published.get(runtime.root, set()) | set(by_uri):
        ls.diagnostics.set(MCP_SOURCE, uri, by_uri.get(uri, []))
    _published[runtime.root] = set(by_uri)


async def servers(runtime: WorkspaceRuntime) -> dict[str, Any]:
    """forge.mcpServers: {servers: [{name, state, source, reason?, tools: [{name, description}]}]} (started if not yet)."""
    runtime.refresh_trust()  # a trust-relevant file changed since the last check: nothing of it starts
    await runtime.mcp.wait_started()
    return {"servers": redact_data(runtime.mcp_describe())}


async def restart(runtime: WorkspaceRuntime, name: Any) -> dict[str, Any]:
    """forge.restartMcpServer {name}: that server stopped and started again; its status once ready or failed."""
    runtime.refresh_trust()
    untrusted = next((server for server in runtime.mcp_untrusted(0) if server["name"] == name), None)
    if untrusted is not None:  # listed, never started: trusting the workspace starts it
        raise JsonRpcInvalidParams(f"MCP server {name}: {untrusted['reason']}; trust it to start its .mcp.json servers")
    if not isinstance(name, str) or name not in runtime.mcp.servers:
        known = ", ".join(sorted(runtime.mcp.servers)) or "none is configured"
        raise JsonRpcInvalidParams(f"forge.restartMcpServer needs {{name}}: one of the MCP servers ({known})")
    return redact_data(await runtime.mcp.restart(name))  # type: ignore[no-any-return]
