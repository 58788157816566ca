"""A small MCP server for the benchmarks, on the SDK's MCPServer (FastMCP in SDK 1.x; stdio): one tool, echo."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    """Say text back."""
    return text


if __name__ == "__main__":
    server.run()
