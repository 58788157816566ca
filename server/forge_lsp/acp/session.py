"""One ACP session: the core's session of a conversation, its workspace, and what its running turn has
shown the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import ToolCallStart

from forge_lsp.acp.mcp import SessionServers
from forge_lsp.core.session import Session

if TYPE_CHECKING:  # imported when the first workspace opens
    from forge_lsp.core.runtime import WorkspaceRuntime


class AcpSession:
    """One ACP session: the core's session of its conversation (files through this client, its questions,
    its answers and todos), its workspace, and what its running turn has shown the client."""

    def __init__(self, core: Session, runtime: WorkspaceRuntime) -> None:
        assert core.conversation_id is not None
        self.id = core.conversation_id
        self.core = core
        self.runtime = runtime
        self.root = runtime.root
        self.outputs: dict[str, str] = {}
        """The running turn's tool outputs as the client may see them (redacted)."""
        self.started: dict[str, ToolCallStart] = {}
        """The running turn's tool calls as they were announced."""
        self.held: list[str] = []
        """The running turn's failed calls, not shown yet: each waits for its retry notice (after its batch), so
        a client shows one failed update with the error and the notice, not the failure and then the call again."""
        self.told_trust = False
        self.told_problems: list[str] = []
        """The config problems this session's chat was last told (told again when they change)."""
        self.prompting = False
        """A prompt of this session is running its turn."""
        self.mcp: SessionServers | None = None
        """The MCP servers the client gave this session (session/new, session/load): its turns' alone."""
