"""An MCP server built with the SDK's MCPServer (FastMCP), for the failures real servers do not make on demand.

python flaky.py [silent | exit-after-list]: silent never answers initialize (it reads stdin and says nothing);
exit-after-list exits on its own (status 4) a moment after it answered tools/list, while the client is idle.
Tools: fail (returns isError), crash (the process exits mid-call), ok (answers "fine"), slow (sleeps), lines (a long output),
grow (adds the tool "grown" and sends notifications/tools/list_changed).
"""

from __future__ import annotations

import os
import sys
import time

if len(sys.argv) > 1 and sys.argv[1] == "silent":
    for _line in sys.stdin:  # reads the initialize request and never answers it
        time.sleep(0.01)
    sys.exit(0)

import anyio  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

server = MCPServer("flaky")


@server.tool(description="Always fails: the result has isError true.")
def fail(reason: str) -> str:
    raise ToolError(f"refused on purpose: {reason}")


@server.tool(description="The server process exits in the middle of this call.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Answers fine.")
def ok() -> str:
    return "fine"


@server.tool(description="Answers that many lines.")
def lines(count: int) -> str:
    return "\n".join(f"line {n}" for n in range(1, count + 1))


@server.tool(description="Answers after some seconds.")
async def slow(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "slept"


def grown() -> str:
    return "grown here"


@server.tool(description="Adds the tool 'grown' and tells the client its tool list changed.")
async def grow(ctx: Context) -> str:
    server.add_tool(grown, description="A tool added while running.")
    await ctx.session.send_tool_list_changed()
    return "added"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "exit-after-list":
        import threading

        listed = server.list_tools

        async def list_then_exit() -> list:  # type: ignore[type-arg]
            def leave() -> None:
                sys.stderr.write("leaving on purpose after listing my tools\n")
                sys.stderr.flush()
                os._exit(4)

            threading.Timer(0.3, leave).start()  # the answer is on its way by then
            return await listed()

        server.list_tools = list_then_exit  # type: ignore[method-assign]
    server.run("stdio")
