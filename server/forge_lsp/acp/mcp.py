"""An ACP session's own MCP servers: the mcpServers of its session/new or session/load.

They are that session's only (another session, the language server and the CLI never see them):
started when the session's first prompt needs their tools, all at once, within [mcp]
startup_timeout_secs; a server that fails is said once in the session's chat and its tools are
absent; stopped when the session closes, is loaded again with other servers, or the agent exits.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from forge_lsp.redact import redact

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.tools.mcp.manager import McpManager

log = logging.getLogger(__name__)


class SessionServers:
    """The MCP servers a client gave one session, and what the session has not been told of them yet."""

    def __init__(self, servers: Any, runtime: WorkspaceRuntime) -> None:
        self.untold: list[str] = []
        """Lines for the session's chat, said before its next turn (a server's failure), each once."""
        self.manager: McpManager = runtime.session_mcp(servers)
        self.manager.on_failure = self._failed

    def _failed(self, spec: Any, reason: str) -> None:
        self.untold.append(f"MCP server {spec.name} failed: {reason}; its tools are not available in this session")

    def __len__(self) -> int:
        return len(self.manager.servers)

    async def start(self) -> str:
        """Start them (when not yet) and wait until each is ready or failed, bounded; what to tell the user
        (each failure once), "" for nothing."""
        await self.manager.wait_started()
        told, self.untold = self.untold, []
        return "".join(f"(forge-lsp: {redact(line)}.)\n\n" for line in told)

    async def close(self) -> None:
        """Stop every server of the session."""
        await self.manager.close()
