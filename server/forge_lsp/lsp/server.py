"""The forge-lsp language server: create_server() builds it with every feature and command registered."""

from __future__ import annotations

from lsprotocol import types as t

from forge_lsp.lsp import agent_commands, code_actions, command_handlers, handlers
from forge_lsp.lsp.folders import open_runtime
from forge_lsp.lsp.language_server import ForgeLanguageServer

COMMANDS = (
    "forge.run",
    "forge.cancel",
    "forge.status",
    "forge.newConversation",
    "forge.showConfig",
    "forge.trust",
    "forge.compact",
    "forge.listConversations",
    "forge.openConversation",
    "forge.deleteConversation",
    "forge.undoTurn",
    "forge.mcpServers",
    "forge.restartMcpServer",
    "forge.setAgent",
    "forge.listAgents",
    "forge.listCommands",
)


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
    server.command("forge.run")(handlers.forge_run)
    server.command("forge.cancel")(handlers.forge_cancel)
    server.command("forge.status")(handlers.forge_status)
    server.command("forge.newConversation")(handlers.forge_new_conversation)
    server.command("forge.showConfig")(handlers.forge_show_config)
    server.command("forge.trust")(handlers.forge_trust)
    server.command("forge.compact")(handlers.forge_compact)
    server.command("forge.listConversations")(handlers.forge_list_conversations)
    server.command("forge.openConversation")(handlers.forge_open_conversation)
    server.command("forge.deleteConversation")(handlers.forge_delete_conversation)
    server.command("forge.undoTurn")(handlers.forge_undo_turn)
    server.command("forge.mcpServers")(handlers.forge_mcp_servers)
    server.command("forge.restartMcpServer")(handlers.forge_restart_mcp_server)
    server.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(handlers.did_change_workspace_folders)
    server.command("forge.setAgent")(agent_commands.forge_set_agent)
    server.command("forge.listAgents")(agent_commands.forge_list_agents)
    server.command("forge.listCommands")(command_handlers.forge_list_commands)
    return server
