"""No MCP server process outlives forge-lsp: after shutdown, after the workspace is removed, after kill -9."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_support import descendants, everything_stdio, flaky, time_server, wait_gone

from support.rawlsp import RawClient

pytestmark = pytest.mark.timeout(60)


def started(tmp_path: Path) -> tuple[RawClient, Path, set[int]]:
    """forge-lsp with three MCP servers started (forge.mcpServers starts them); its MCP processes."""
    root = tmp_path / "ws"
    root.mkdir()
    servers: dict[str, Any] = {"time": time_server(), "flaky": flaky(), "everything": everything_stdio()}
    client = RawClient([sys.executable, "-m", "forge_lsp"], cwd=root, settings={"mcpServers": servers})
    client.initialize(root, {"mcpServers": servers})
    client.notify("initialized", {})
    listed = client.request("workspace/executeCommand", {"command": "forge.mcpServers", "arguments": [{}]})
    assert [(s["name"], s["state"]) for s in listed["servers"]] == [
        ("everything", "ready"), ("flaky", "ready"), ("time", "ready")
    ]  # fmt: skip
    children = descendants(client.proc.pid)
    assert len(children) >= 6, children  # a guard and a server each
    return client, root, children


def test_none_left_after_shutdown(tmp_path: Path) -> None:
    client, _, children = started(tmp_path)
    client.close()
    assert client.proc.returncode == 0
    assert wait_gone(children, 5) == set()


def test_a_request_during_shutdown_starts_no_server_again(tmp_path: Path) -> None:
    """forge.mcpServers sent while shutdown stops the servers (an editor's list refreshing as it quits): no
    server starts again, so none runs once shutdown has answered (before exit, or without one)."""
    client, _, children = started(tmp_path)
    try:
        shutdown = client.send_request("shutdown", None)
        client.send_request("workspace/executeCommand", {"command": "forge.mcpServers", "arguments": [{}]})
        client.wait_response(shutdown)
        assert wait_gone(children, 5) == set()
        assert wait_gone(descendants(client.proc.pid), 5) == set(), "a server was started again during shutdown"
        client.notify("exit", None)
        assert client.proc.wait(10) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def test_none_left_after_the_workspace_folder_is_removed(tmp_path: Path) -> None:
    client, root, children = started(tmp_path)
    try:
        client.notify(
            "workspace/didChangeWorkspaceFolders",
            {"event": {"added": [], "removed": [{"uri": root.as_uri(), "name": root.name}]}},
        )
        assert wait_gone(children, 10) == set()
    finally:
        client.close()


def test_none_left_after_kill_9(tmp_path: Path, record_reliability: Callable[[str, str, str], None]) -> None:
    client, _, children = started(tmp_path)
    os.kill(client.proc.pid, signal.SIGKILL)
    client.proc.wait()
    assert wait_gone(children, 5) == set()
    record_reliability(
        "kill -9 of forge-lsp with MCP servers running",
        "three stdio MCP servers (Python, node) started, then SIGKILL to the server",
        "every MCP process (and its children) gone within 5 s: the guard kills its group when its parent dies",
    )


def test_a_changed_entry_stops_its_server(tmp_path: Path) -> None:
    client, _, children = started(tmp_path)
    try:
        changed = {"time": {**time_server(), "args": ["--local-timezone", "UTC"]}}
        client.notify("workspace/didChangeConfiguration", {"settings": {"forge": {"mcpServers": changed}}})
        assert wait_gone(children, 10) == set()  # time's entry changed, the others went away
        listed = client.request("workspace/executeCommand", {"command": "forge.mcpServers", "arguments": [{}]})
        assert [(s["name"], s["state"]) for s in listed["servers"]] == [("time", "ready")]
    finally:
        client.close()
