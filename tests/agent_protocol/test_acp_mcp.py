"""Issue 26, ACP: the mcpServers of session/new and session/load start for that session only.

The agent-client-protocol package's client drives `forge-lsp acp` in a subprocess; the model is the
loopback OpenAI-compatible stub, which records the tools each request offers; the MCP server is
mcp-server-time (PyPI, stdio), which no one here wrote.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, McpServerStdio
from test_acp import Recorder

from support import forkserver
from support.openai_server import OpenAIStub
from support.processes import processes_in
from support.trust import trust_workspace

pytestmark = pytest.mark.timeout(120)

TIME_TOOL = "mcp_time_get_current_time"


def time_server(name: str = "time") -> McpServerStdio:
    return McpServerStdio(name=name, command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[])


def offered(request: dict[str, Any]) -> set[str]:
    """The tool names a model request offered."""
    return {t["function"]["name"] for t in request["body"].get("tools") or []}


async def gone(folder: Path, timeout: float = 10.0) -> list[str]:
    """What is still running in folder after timeout (nothing, once the servers have stopped)."""
    end = time.monotonic() + timeout
    while (left := processes_in(folder)) and time.monotonic() < end:
        await asyncio.sleep(0.1)
    return left


def stub_workspace(ws: Path, url: str) -> Path:
    (ws / ".forge.toml").write_text(f'model = "openai/gpt-stub"\napi_base = "{url}"\n[retry]\nmin_delay_ms = 1\n')
    trust_workspace(ws)  # the user trusts the loopback api_base
    return ws


async def start(client: Recorder) -> Any:
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "FORGE_LSP_WARMUP_DELAY": "off",
        "OPENAI_API_KEY": "sk-test-0123",
    }
    ctx = spawn_agent_process(lambda _agent: client, *forkserver.command(), "acp", env=env)
    conn, proc = await ctx.__aenter__()
    init = await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    # The agent says it takes http and sse servers (stdio always) and session/close.
    caps = init.agent_capabilities
    assert caps.mcp_capabilities.http and caps.mcp_capabilities.sse and caps.session_capabilities.close is not None
    return ctx, conn, proc


async def test_a_sessions_mcp_server_is_that_sessions_only_and_stops_with_the_agent(workspace: Path) -> None:
    behaviours = [
        {"tool": TIME_TOOL, "arguments": json.dumps({"timezone": "UTC"})},
        {"text": "It is noon in UTC."},
        {"text": "No clock here."},
    ]
    with OpenAIStub(behaviours) as stub:
        stub_workspace(workspace, stub.url)
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            with_time = await conn.new_session(cwd=str(workspace), mcp_servers=[time_server()])
            first = await conn.prompt(session_id=with_time.session_id, prompt=[text_block("what time is it?")])
            assert processes_in(workspace), "the session's MCP server is not running in the workspace"
            without = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            second = await conn.prompt(session_id=without.session_id, prompt=[text_block("and here?")])
        finally:
            await ctx.__aexit__(None, None, None)
        requests = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    assert len(requests) == 3, requests
    # Session 1's requests offer the server's tools (with the built-in ones); session 2's do not.
    assert {TIME_TOOL, "mcp_time_convert_time", "shell"} <= offered(requests[0]), offered(requests[0])
    assert TIME_TOOL in offered(requests[1])
    assert not {t for t in offered(requests[2]) if t.startswith("mcp_")}, offered(requests[2])
    # The call went to the server and its answer is the tool's output.
    calls = client.of("tool_call")
    assert [c.title for c in calls] and TIME_TOOL in calls[0].title, calls
    done = [u for u in client.of("tool_call_update") if u.status == "completed"]
    assert done and '"timezone": "UTC"' in done[0].content[0].content.text, done
    assert "It is noon in UTC." in client.text()
    # The agent exited: nothing it started for the session is left.
    assert await gone(workspace) == []


async def test_session_load_starts_the_servers_it_is_given(workspace: Path) -> None:
    behaviours = [
        {"text": "Hello."},
        {"tool": TIME_TOOL, "arguments": json.dumps({"timezone": "UTC"})},
        {"text": "Done."},
    ]
    with OpenAIStub(behaviours) as stub:
        stub_workspace(workspace, stub.url)
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        finally:
            await ctx.__aexit__(None, None, None)
        # A new agent (the editor restarted) loads the conversation with a server of its own.
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[time_server("clock")])
            result = await conn.prompt(session_id=session.session_id, prompt=[text_block("what time is it?")])
        finally:
            await ctx.__aexit__(None, None, None)
        requests = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert result.stop_reason == "end_turn"
    assert not {t for t in offered(requests[0]) if t.startswith("mcp_")}
    assert "mcp_clock_get_current_time" in offered(requests[1]), offered(requests[1])
    assert await gone(workspace) == []


async def test_session_close_stops_its_servers_and_a_bad_server_never_blocks_the_turn(workspace: Path) -> None:
    behaviours = [{"text": "Still here."}]
    broken = McpServerStdio(name="broken", command=sys.executable, args=["-c", "import sys; sys.exit(3)"], env=[])
    with OpenAIStub(behaviours) as stub:
        stub_workspace(workspace, stub.url)
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[time_server(), broken])
            result = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
            assert processes_in(workspace)
            await conn.close_session(session_id=session.session_id)
            left = await gone(workspace)
            with pytest.raises(RequestError, match="no session"):  # closed: a prompt to it is refused
                await conn.prompt(session_id=session.session_id, prompt=[text_block("hi again")])
        finally:
            await ctx.__aexit__(None, None, None)
        requests = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert result.stop_reason == "end_turn" and "Still here." in client.text()
    # The failure is said once, in the chat, before the turn's own text.
    told = client.text()
    assert told.count("MCP server broken failed: ") == 1 and told.index("broken failed") < told.index("Still here."), told
    assert "its tools are not available in this session" in told, told
    assert TIME_TOOL in offered(requests[0]) and not any(t.startswith("mcp_broken") for t in offered(requests[0]))
    assert left == [], left


async def test_a_failure_of_the_workspaces_own_server_is_said_in_the_chat_once(workspace: Path) -> None:
    """A trusted workspace's .mcp.json server that exits: the session that started it is told, once, before
    its turn; the turn runs."""
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"wsbroken": broken}}))
    with OpenAIStub([{"text": "First."}, {"text": "Second."}]) as stub:
        stub_workspace(workspace, stub.url)  # trusts the workspace, .mcp.json with it
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            first = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
            second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        finally:
            await ctx.__aexit__(None, None, None)
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    told = client.text()
    assert told.count("MCP server wsbroken failed: ") == 1, told
    assert ".mcp.json" in told and told.index("wsbroken failed") < told.index("First."), told


async def test_a_sessions_server_shadows_the_users_server_of_the_same_name(workspace: Path) -> None:
    """Issue 26, "a later source wins per server name": a session/new server named like one of the user's
    mcp.json is that session's only server of the name: the user's is not started for it, and the session's
    failure is its own (no tools of the name offered). Another session still gets the user's server."""
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "mcp.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    time_cmd = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    user_file.write_text(json.dumps({"mcpServers": {"time": time_cmd}}))
    broken = McpServerStdio(name="time", command=sys.executable, args=["-c", "import sys; sys.exit(3)"], env=[])
    with OpenAIStub([{"text": "First."}, {"text": "Second."}]) as stub:
        stub_workspace(workspace, stub.url)
        client = Recorder()
        ctx, conn, _proc = await start(client)
        try:
            shadowed = await conn.new_session(cwd=str(workspace), mcp_servers=[broken])
            first = await conn.prompt(session_id=shadowed.session_id, prompt=[text_block("hi")])
            running_after_first = processes_in(workspace)
            told_first = client.text()
            plain = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            second = await conn.prompt(session_id=plain.session_id, prompt=[text_block("again")])
        finally:
            await ctx.__aexit__(None, None, None)
        requests = [r for r in stub.requests if r["path"].endswith("/chat/completions")]
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    # The shadowed session: the session's server failed and said so; no time tool, the user's server not started.
    assert told_first.count("MCP server time failed: ") == 1, told_first
    assert str(user_file) not in told_first, told_first
    assert not {t for t in offered(requests[0]) if t.startswith("mcp_")}, offered(requests[0])
    assert running_after_first == [], running_after_first
    # Another session of the workspace: the user's server serves it.
    assert TIME_TOOL in offered(requests[1]), offered(requests[1])
    assert client.text().count("MCP server time failed: ") == 1, client.text()
    assert await gone(workspace) == []
