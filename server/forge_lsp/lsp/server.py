"""The forge-lsp language server: create_server() builds it with every feature and command registered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as t

from forge_lsp.lsp import agent_commands, code_actions, command_handlers, handlers
from forge_lsp.lsp.command_arguments import (
    CancelArgument,
    FolderArgument,
    IdArgument,
    NameArgument,
    RunArgument,
    TrustArgument,
    UndoTurnArgument,
    shape,
)
from forge_lsp.lsp.folders import open_runtime
from forge_lsp.lsp.language_server import ForgeLanguageServer

Handler = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class ServerCommand:
    """One workspace/executeCommand command: its name, the argument it takes, the handler that answers it.

    Every command takes one JSON object (none: {}): pygls 2 hands it to the handler as it came (``*args``,
    unconverted; lsp/handlers.object_argument checks it is one object), so the handler checks each field
    and a bad one is an InvalidParams that names it. ``argument`` is that object's class
    (lsp/command_arguments.py); docs/design.md's command table writes its shape
    (tests/unit/test_command_table.py compares the two)."""

    name: str
    argument: type
    handler: Handler

    def shape(self) -> str:
        """The argument as docs/design.md writes it: ``{id, uri?}``."""
        return shape(self.argument)


SERVER_COMMANDS: tuple[ServerCommand, ...] = (
    ServerCommand("forge.run", RunArgument, handlers.forge_run),
    ServerCommand("forge.cancel", CancelArgument, handlers.forge_cancel),
    ServerCommand("forge.status", FolderArgument, handlers.forge_status),
    ServerCommand("forge.newConversation", FolderArgument, handlers.forge_new_conversation),
    ServerCommand("forge.showConfig", FolderArgument, handlers.forge_show_config),
    ServerCommand("forge.trust", TrustArgument, handlers.forge_trust),
    ServerCommand("forge.compact", FolderArgument, handlers.forge_compact),
    ServerCommand("forge.listConversations", FolderArgument, handlers.forge_list_conversations),
    ServerCommand("forge.openConversation", IdArgument, handlers.forge_open_conversation),
    ServerCommand("forge.deleteConversation", IdArgument, handlers.forge_delete_conversation),
    ServerCommand("forge.undoTurn", UndoTurnArgument, handlers.forge_undo_turn),
    ServerCommand("forge.mcpServers", FolderArgument, handlers.forge_mcp_servers),
    ServerCommand("forge.restartMcpServer", NameArgument, handlers.forge_restart_mcp_server),
    ServerCommand("forge.setAgent", IdArgument, agent_commands.forge_set_agent),
    ServerCommand("forge.listAgents", FolderArgument, agent_commands.forge_list_agents),
    ServerCommand("forge.listCommands", FolderArgument, command_handlers.forge_list_commands),
)
"""The server's commands, in the order initialize advertises them: adding one is its handler and a row here
(and its row in docs/design.md, and an entry in each editor's table where a person runs it)."""

COMMANDS: tuple[str, ...] = tuple(command.name for command in SERVER_COMMANDS)


def create_server() -> ForgeLanguageServer:
    """A new server with every feature and command registered (no import-time server)."""
    from forge_lsp.lsp.transport import install_reader

    install_reader()  # a malformed frame is skipped, not the end of every later message
    server = ForgeLanguageServer(open_runtime)

    server.feature(t.INITIALIZE)(handlers.initialize)
    server.feature(t.INITIALIZED)(handlers.initialized)
    server.feature(t.SHUTDOWN)(handlers.shutdown)
    server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)(handlers.did_change_configuration)
    server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)(handlers.did_change_watched_files)
    server.feature(t.TEXT_DOCUMENT_DID_OPEN)(handlers.did_open)
    server.feature(t.TEXT_DOCUMENT_DID_CHANGE)(handlers.did_change)
    server.feature(t.TEXT_DOCUMENT_DID_CLOSE)(handlers.did_close)
    server.feature(t.TEXT_DOCUMENT_DID_SAVE)(handlers.did_save)
    server.feature(handlers.FLUSH)(handlers.flushed)
    server.feature(t.WINDOW_WORK_DONE_PROGRESS_CANCEL)(handlers.progress_cancel)
    server.feature(t.TEXT_DOCUMENT_CODE_ACTION, code_actions.OPTIONS)(handlers.code_action)
    server.feature(t.CODE_ACTION_RESOLVE)(handlers.code_action_resolve)
    server.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(handlers.did_change_workspace_folders)
    for command in SERVER_COMMANDS:
        server.command(command.name)(command.handler)
    return server
