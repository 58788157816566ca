"""forge-lsp mcp list: the workspace's MCP servers started, each with its state and tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from forge_lsp.redact import redact, redact_data
from forge_lsp.render import say

EXIT_OK, EXIT_FAILED = 0, 1


async def mcp_list(workspace: Path, as_json: bool, trusted: bool, out: TextIO) -> int:
    """Start every configured server (at most [mcp] startup_timeout_secs), print them; 1 when one failed."""
    from forge_lsp.cli.headless import say_problems, untrusted_line
    from forge_lsp.core.runtime import WorkspaceRuntime

    runtime = WorkspaceRuntime(
        workspace,
        trusted=True if trusted else None,
        on_notice=lambda message: say(sys.stderr, message),
        on_mcp_failure=lambda spec, reason: None,  # said below, with the rest
    )
    try:
        problems = runtime.config_problems()
        say_problems(problems)
        # mcp.json / .mcp.json that cannot be read (not JSON, an unknown field): its servers do not start
        unreadable = [p for p in problems if p.path is not None and p.path.name in ("mcp.json", ".mcp.json")]
        ignored = [p for p in runtime.untrusted_problems() if p.key.startswith("mcpServers")]
        if ignored:
            say(sys.stderr, untrusted_line(runtime.root, workspace, ignored, runtime.untrusted_since()))
        await runtime.mcp.wait_started()
        servers = runtime.mcp_describe()
    finally:
        runtime.close()
        await runtime.close_mcp()
    if as_json:
        say(out, json.dumps({"servers": redact_data(servers)}, indent=2))
    elif not servers and unreadable:
        say(out, f"no MCP server starts: the problems above ({len(unreadable)}) are in {unreadable[0].path}")
    elif not servers:
        say(
            out, f"no MCP servers are configured for {runtime.root} (see docs/mcp.md: mcp.json, .mcp.json, the editor's settings)"
        )
    for server in [] if as_json else servers:
        state = server["state"]
        if state == "ready":
            state = f"ready ({len(server['tools'])} tool{'s' if len(server['tools']) != 1 else ''})"
        elif state in ("failed", "untrusted"):
            state = f"{state}: {server.get('reason', '')}"
        say(out, redact(f"{server['name']}  {state}  [{server['source']}]"))
        for tool in server["tools"]:
            first = tool["description"].splitlines()[0][:100] if tool["description"] else ""
            say(out, redact(f"  {tool['name']}  {first}".rstrip()))
    return EXIT_FAILED if unreadable or any(s["state"] == "failed" for s in servers) else EXIT_OK
