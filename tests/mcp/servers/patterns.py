"""An MCP server whose schemas carry patterns made to backtrack (issue 34 item 8), on the SDK's low-level Server.

Tools: `match` (input schema: `text` must match ^(a+)+$), `shape` (no input; its output schema says `text`
matches ^(b+)+$, and its structured content is 'b' * 40 + '!'), and `lookahead` (input `text` must match
^(?=x).+$, a pattern RE2 cannot run). Every call answers "called" (the server checks nothing itself).
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="match",
        description="Its argument must match ^(a+)+$.",
        input_schema={"type": "object", "properties": {"text": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["text"]},
    ),
    types.Tool(
        name="shape",
        description="Answers structured content that its own output schema's pattern backtracks on.",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"text": {"type": "string", "pattern": "^(b+)+$"}}},
    ),
    types.Tool(
        name="lookahead",
        description="Its argument must match ^(?=x).+$.",
        input_schema={"type": "object", "properties": {"text": {"type": "string", "pattern": "^(?=x).+$"}}},
    ),
]


async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "shape":
        text = "b" * 40 + "!"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content={"text": text})
    return types.CallToolResult(content=[types.TextContent(type="text", text="called")])


server = Server("patterns", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
