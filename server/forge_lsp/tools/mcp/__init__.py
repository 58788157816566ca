"""The MCP client: tools from Model Context Protocol servers, on the official `mcp` SDK.

names (mcp_<server>_<tool>), guard (no server process outlives forge-lsp), content (a result as
the model's text), server (one server's connection), manager (a runtime's or a session's servers).
The SDK is imported only when a server starts: the language server answers initialize without it.
"""
