"""An MCP server built with the SDK's MCPServer (FastMCP) whose tool changes a file on disk, as a code-mod or a
formatter server does: what it changes in a document open in the editor must reach the buffer (issue 35).

python codemod.py   Tools: replace (old by new in the file at path).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("codemod")


@server.tool(description="Replaces old with new in the file at path.")
def replace(path: str, old: str, new: str) -> str:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    return "replaced"


if __name__ == "__main__":
    server.run("stdio")
