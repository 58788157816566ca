"""Files made to be slow (the pass after issue 34): a few kilobytes a repository, a web page or an MCP server
writes so that one of the server's own regular expressions, or a loop over them, backtracks or goes quadratic.
Each test goes through the path a user takes (the language server answering forge.status, a tool call in a turn)
and fails when the server stops answering or the call outlives a bound far above what it needs.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.rawlsp import RawClient

pytestmark = pytest.mark.timeout(120)

Record = Callable[[str, str, str], None]
SERVER = forkserver.command()


@contextmanager
def server(workspace: Path) -> Iterator[RawClient]:
    """A language server for the workspace (not trusted), killed at the end whatever state it is in."""
    client = RawClient(SERVER)
    try:
        client.initialize(workspace, {}, trusted=False)
        client.notify("initialized", {})
        yield client
    finally:
        client.proc.kill()
        client.proc.wait()


def answered_within(seconds: float, client: RawClient, command: str = "forge.status") -> Any:
    """The command's answer, or a failure when the server has not answered within seconds (wedged)."""
    found: list[Any] = []

    def ask() -> None:
        found.append(client.request("workspace/executeCommand", {"command": command, "arguments": [{}]}))

    thread = threading.Thread(target=ask, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert found, f"{command}: no answer within {seconds} s, the server stopped answering"
    return found[0], time.monotonic() - started


def test_a_forge_toml_line_made_to_backtrack(workspace: Path, record_reliability: Record) -> None:
    # Valid TOML: a multi-line string may hold any line. The server indexes every line of .forge.toml for the
    # lines of its diagnostics; "[" and 20,000 spaces made that index's header pattern run for hours.
    (workspace / ".forge.toml").write_text(
        'api_base = "http://127.0.0.1:9/v1"\nnote = """\n[' + " " * 20_000 + "\nx" + " " * 20_000 + '\n"""\n'
    )
    with server(workspace) as client:
        status, took = answered_within(15, client)
    assert status["trusted"] is False
    record_reliability(
        "attack: a .forge.toml line made to backtrack",
        'a multi-line string holding "[" and 20,000 spaces (and a key name followed by 20,000 spaces), untrusted',
        f"forge.status answered in {took:.1f} s: the line index's patterns are linear (they ran for hours)",
    )


def test_an_mcp_json_of_many_entries(workspace: Path, record_reliability: Record) -> None:
    # 30,000 entries (800 KB, under the 1 MiB a .mcp.json may have): each entry's line was searched from the top
    # of the text, so every load (the start, each reload of a changed file) took the square of the file's size.
    servers = {f"s{i:05d}": {"command": "true"} for i in range(30_000)}
    text = json.dumps({"mcpServers": servers}, separators=(",", ":")).replace("},", "},\n")
    assert len(text) < 1024 * 1024
    (workspace / ".mcp.json").write_text(text)
    with server(workspace) as client:
        status, took = answered_within(15, client)
    assert status["trusted"] is False
    assert all(s["state"] == "untrusted" for s in status["mcp"]), status["mcp"][:3]
    record_reliability(
        "attack: a .mcp.json of 30,000 entries",
        "an untrusted workspace's .mcp.json of 30,000 servers (800 KB), the language server started on it",
        f"forge.status answered in {took:.1f} s (each entry's line is found in one pass; it took over a minute)",
    )


async def test_a_gitmodules_made_to_backtrack_does_not_stall_file_tools(workspace: Path, record_reliability: Record) -> None:
    from dataclasses import replace as with_

    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.domain.messages import ToolCall
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.registry import ToolRegistry
    from forge_lsp.tools.workspace import Workspace

    # Every write of a file tool reads .gitmodules (at most 100 KB) for the repositories git would run code from:
    # blank lines and a path line padded with spaces made its pattern go quadratic, on the event loop.
    (workspace / ".gitmodules").write_text("\n" * 30_000 + "path = x" + " " * 65_000 + "y\n")
    ctx = ToolContext(Workspace(workspace), with_(ForgeConfig(), trusted=False))
    started = time.monotonic()
    result, _ = await ToolRegistry().call(ToolCall("c1", "write", json.dumps({"file_path": "a.txt", "content": "a\n"})), ctx)
    took = time.monotonic() - started
    assert not result.is_error, result.content
    assert took < 5, f"the write took {took:.1f} s"
    record_reliability(
        "attack: a .gitmodules made to backtrack",
        "30,000 blank lines and a path line padded with 65,000 spaces (95 KB: what is read of it), then a write",
        f"the write done in {took:.1f} s: .gitmodules is read line by line (its pattern took minutes per write)",
    )
