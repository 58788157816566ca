"""MCP from the command line: forge-lsp mcp list (exit 1 when a server failed), and forge-lsp run calling a tool."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_support import flaky, searched_path, time_server

from support import forkserver
from support.trust import trust_workspace

pytestmark = pytest.mark.timeout(60)


def forge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*forkserver.command(), *args], capture_output=True, text=True, timeout=50, env=env, cwd=cwd)


def user_servers(servers: dict[str, Any]) -> Path:
    """The user's ~/.config/forge-lsp/mcp.json (XDG_CONFIG_HOME is the test's own)."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def test_mcp_list_says_each_server_and_fails_when_one_did(tmp_path: Path) -> None:
    user_servers({"time": time_server(), "gone": {"command": "no-such-mcp-server-here"}, "off": {**flaky(), "disabled": True}})
    done = forge("mcp", "list", "-w", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    searched = f"not found on PATH ({searched_path()}); give its full path as command"  # where it was looked for
    assert lines[0] == f"gone  failed: cannot start no-such-mcp-server-here: {searched}  [user]"
    assert lines[1] == "off  disabled  [user]"
    assert lines[2] == "time  ready (2 tools)  [user]" and lines[3].startswith("  mcp_time_get_current_time  ")
    user_servers({"time": time_server()})
    listed = forge("mcp", "list", "-w", str(tmp_path), "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (server,) = json.loads(listed.stdout)["servers"]
    assert server["state"] == "ready" and len(server["tools"]) == 2


def test_mcp_list_fails_when_the_users_mcp_json_cannot_be_read(tmp_path: Path) -> None:
    path = user_servers({"time": time_server()})
    path.write_text(path.read_text().replace("}\n  }", "},\n  }"))  # a trailing comma: not JSON
    done = forge("mcp", "list", "-w", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # not "0, no servers": the file is broken
    assert "mcp.json:6: invalid JSON" in done.stderr and "no MCP servers are configured" not in done.stdout
    assert "no MCP server starts: the problems above" in done.stdout
    user_servers({"time": {"comand": "mcp-server-time"}})  # a misspelt field
    done = forge("mcp", "list", "-w", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1 and "unknown field(s) comand" in done.stderr, done.stdout + done.stderr


def test_an_untrusted_mcp_json_is_said_and_never_started(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "touch", "args": ["pwned"]}}}))
    done = forge("mcp", "list", "-w", str(tmp_path), cwd=tmp_path)
    # Listed, never started: not a failure (exit 0); trusting the workspace would start it.
    assert done.returncode == 0 and done.stdout == "evil  untrusted: not started: the workspace is not trusted  [workspace]\n"
    assert "is not trusted, so it cannot set: .mcp.json:1 mcpServers.evil" in done.stderr
    assert not (tmp_path / "pwned").exists()


def test_run_calls_an_mcp_tool(tmp_path: Path) -> None:
    user_servers({"time": time_server()})
    script = {"responses": [{"tool_calls": [{"name": "mcp_time_convert_time", "arguments": {
        "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}]}, {"text": "noon in UTC is 21:00 in Tokyo"}]}  # fmt: skip
    (tmp_path / "script.json").write_text(json.dumps(script))
    (tmp_path / ".forge.toml").write_text('model = "scripted/script.json"\n')
    trust_workspace(tmp_path)
    done = forge("run", "convert", "-w", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mcp_time_convert_time" in done.stdout and "21:00" in done.stdout
