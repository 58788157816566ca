"""MCP benchmarks (issue 26), each against a baseline measured in the same run.

1. The first turn's extra wait with three servers: an ACP session given three stdio servers
   (mcp-server-time twice, and the SDK's MCPServer echo server in bench/mcp_echo_server.py) against a
   session without servers, in the same `forge-lsp acp` process, each a first prompt in a fresh session
   on the scripted model; the baseline is the three servers started concurrently with the SDK directly
   (stdio_client + initialize + list_tools), i.e. the slowest one's startup. Interleaved.
2. One MCP tool call through forge-lsp's tool layer (the registry: argument check against the server's
   schema, the call, the result as text) against the same call with the SDK's ClientSession directly,
   on the same mcp-server-time connection. Interleaved blocks.

python bench/mcp_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it
with the others)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from rows import standalone

ROOT = Path(__file__).resolve().parents[1]
ECHO = str(ROOT / "bench" / "mcp_echo_server.py")
TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

Report = Callable[[str, str, str, float, str], None]


def servers() -> dict[str, tuple[str, list[str]]]:
    """The three servers: name -> (command, args)."""
    return {"time": (sys.executable, TIME_ARGS), "clock": (sys.executable, TIME_ARGS), "echo": (sys.executable, [ECHO])}


async def sdk_startup(name: str, command: str, args: list[str]) -> float:
    """One server started with the SDK directly: spawn, initialize, list its tools; seconds."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    start = time.perf_counter()
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(StdioServerParameters(command=command, args=args)))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        await session.list_tools()
        took = time.perf_counter() - start
    return took


async def sdk_concurrent() -> float:
    """The three started at once with the SDK: the slowest one's startup (not counting their shutdown)."""
    return max(await asyncio.gather(*(sdk_startup(n, c, a) for n, (c, a) in servers().items())))


def acp_servers() -> list[dict[str, Any]]:
    return [{"name": n, "command": c, "args": a, "env": []} for n, (c, a) in servers().items()]


async def first_turn_extra_wait(report: Report, rounds: int) -> None:
    from acp import spawn_agent_process, text_block
    from acp.schema import ClientCapabilities, McpServerStdio

    class Quiet:
        async def session_update(self, *args: Any, **kwargs: Any) -> None:
            pass

        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("no questions in the bench")

        def on_connect(self, conn: Any) -> None:
            pass

    ws = Path(tempfile.mkdtemp(prefix="forge-bench-mcp-"))
    home = Path(tempfile.mkdtemp(prefix="forge-bench-mcp-home-"))
    (home / "config" / "forge-lsp").mkdir(parents=True)
    # The user's own config sets the scripted model (a workspace's would need trusting first).
    (home / "config" / "forge-lsp" / "config.toml").write_text('model = "scripted/ready"\n')
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "FORGE_LSP_WARMUP_DELAY": "off",
    }
    specs = [McpServerStdio(**s) for s in acp_servers()]
    with_servers: list[float] = []
    without: list[float] = []
    baseline: list[float] = []
    ctx = spawn_agent_process(lambda _agent: Quiet(), sys.executable, "-m", "forge_lsp", "acp", env=env)
    conn, _proc = await ctx.__aenter__()
    try:
        await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())

        async def prompt(mcp: list[Any]) -> float:
            session = await conn.new_session(cwd=str(ws), mcp_servers=mcp)
            start = time.perf_counter()
            result = await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
            took = time.perf_counter() - start
            assert result.stop_reason == "end_turn", result
            await conn.close_session(session_id=session.session_id)
            return took

        await prompt([])  # litellm and the templates load on the agent's first turn: not part of either side
        await sdk_concurrent()  # the servers' own first start (byte-compiling, the page cache) likewise
        for i in range(rounds):  # interleaved, which side goes first alternating: the load hits both alike
            if i % 2 == 0:
                baseline.append(await sdk_concurrent())
            with_servers.append(await prompt(specs))
            without.append(await prompt([]))
            if i % 2 == 1:
                baseline.append(await sdk_concurrent())
    finally:
        await ctx.__aexit__(None, None, None)
    extra = statistics.median(with_servers) - statistics.median(without)
    slowest = statistics.median(baseline)
    report(
        "first turn's extra wait with three MCP servers (ACP session/new mcpServers: mcp-server-time ×2 + an MCPServer echo"
        f" server; median of {rounds}, a fresh session each)",
        f"{extra * 1000:.0f} ms (first turn {statistics.median(with_servers) * 1000:.0f} ms against"
        f" {statistics.median(without) * 1000:.0f} ms without servers)",
        f"the three started concurrently with the SDK directly (the slowest one's startup) {slowest * 1000:.0f} ms",
        extra / slowest,
        "≤ 1.2×",
    )


async def tool_call_overhead(report: Report, calls: int) -> None:
    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.domain.messages import ToolCall
    from forge_lsp.mcp_config import parse_entry
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.mcp.manager import McpManager
    from forge_lsp.tools.registry import ToolRegistry
    from forge_lsp.tools.workspace import Workspace

    ws = Path(tempfile.mkdtemp(prefix="forge-bench-mcp-call-"))
    spec = parse_entry("time", {"command": sys.executable, "args": TIME_ARGS}, "user")
    manager = McpManager({"time": spec}, ws)
    definitions = await manager.tool_definitions()
    registry = ToolRegistry(definitions)
    ctx = ToolContext(Workspace(ws), ForgeConfig())
    args = {"timezone": "UTC"}
    name = "mcp_time_get_current_time"
    # The baseline is the SDK's ClientSession of the same connection: the same server process, so the
    # difference is forge-lsp's tool layer alone.
    session = manager.servers["time"].session

    async def direct() -> None:
        result = await session.call_tool("get_current_time", args)
        assert not result.is_error

    async def through_forge() -> None:
        result, _ = await registry.call(ToolCall(id="c", name=name, arguments_json=json.dumps(args)), ctx)
        assert not result.is_error, result.output

    sdk: list[float] = []
    forge: list[float] = []
    block = 10
    for fn in (direct, through_forge):  # warm both paths
        for _ in range(5):
            await fn()
    # Small blocks, the two sides in turn and which goes first alternating: the machine's load hits both alike.
    for i in range(calls // block):
        pair = ((direct, sdk), (through_forge, forge))
        for fn, into in pair if i % 2 == 0 else pair[::-1]:
            start = time.perf_counter()
            for _ in range(block):
                await fn()
            into.append((time.perf_counter() - start) / block)
    await manager.close()
    per_sdk, per_forge = statistics.median(sdk), statistics.median(forge)
    report(
        f"MCP tool call through forge-lsp's tool layer (mcp-server-time get_current_time, stdio; {calls} calls, interleaved blocks)",
        f"{per_forge * 1000:.2f} ms",
        f"the same call with the SDK's ClientSession directly (same connection) {per_sdk * 1000:.2f} ms",
        per_forge / per_sdk,
        "≤ 1.2×",
    )


def run(report: Report, quick: bool) -> None:
    asyncio.run(first_turn_extra_wait(report, 2 if quick else 9))
    asyncio.run(tool_call_overhead(report, 100 if quick else 1000))


MY_ROWS = ("| first turn's extra wait with three MCP servers", "| MCP tool call through forge-lsp")


def main() -> None:
    standalone(run, MY_ROWS)


if __name__ == "__main__":
    main()
