// The extension's commands, in one table: package.json's contributes.commands (and the entries hidden from the
// palette) are this table (src/test/commands.test.ts compares them), extension.ts registers a handler for each
// id (its type makes a missing one an error), and tests/unit/test_command_table.py checks that every server
// command named here is one of the server's. Adding a command: a row here, the same in package.json, its
// handler in extension.ts (or chat.ts), and the server command it sends, if new, on the server.
// Pure: no vscode import, so the tests read it without VS Code.

/** One palette command of the extension. */
export interface PaletteCommand {
  /** The VS Code command id. */
  readonly id: string;
  /** Its title in the command palette. */
  readonly title: string;
  /** The server commands (workspace/executeCommand) it sends. */
  readonly sends: readonly string[];
  /** Not offered in the palette (a button's command): package.json's menus.commandPalette hides it. */
  readonly hidden?: boolean;
}

export const PALETTE = [
  { id: "forge.runAgent", title: "Forge: Run Agent", sends: ["forge.run"] },
  { id: "forge.runCommand", title: "Forge: Run Command…", sends: ["forge.listCommands", "forge.run"] },
  { id: "forge.cancelTurn", title: "Forge: Cancel", sends: ["forge.cancel"] },
  { id: "forge.showStatus", title: "Forge: Status", sends: ["forge.status"] },
  { id: "forge.showEffectiveConfig", title: "Forge: Show Config", sends: ["forge.showConfig"] },
  { id: "forge.startNewConversation", title: "Forge: New Conversation", sends: ["forge.newConversation"] },
  { id: "forge.restartServer", title: "Forge: Restart Server", sends: [] },
  { id: "forge.trustWorkspace", title: "Forge: Trust Workspace", sends: ["forge.trust"] },
  { id: "forge.chatContinue", title: "Forge: Continue in Chat", sends: ["forge.run"], hidden: true },
  { id: "forge.pickConversation", title: "Forge: Open Conversation", sends: ["forge.listConversations", "forge.openConversation"] },
  { id: "forge.undoLastTurn", title: "Forge: Undo Last Turn", sends: ["forge.undoTurn"] },
  { id: "forge.showMcpServers", title: "Forge: MCP Servers", sends: ["forge.mcpServers", "forge.restartMcpServer"] },
  { id: "forge.selectAgent", title: "Forge: Select Agent", sends: ["forge.listAgents", "forge.setAgent"] },
] as const satisfies readonly PaletteCommand[];

/** A command id of the table. */
export type PaletteId = (typeof PALETTE)[number]["id"];

/** The ids chat.ts registers (the chat's own buttons); extension.ts registers the others. */
export const CHAT_COMMANDS = ["forge.chatContinue"] as const;

/** package.json's contributes.commands and menus.commandPalette as this table makes them. */
export function contributions(): { commands: { command: string; title: string }[]; commandPalette: { command: string; when: string }[] } {
  return {
    commands: PALETTE.map((c) => ({ command: c.id, title: c.title })),
    commandPalette: PALETTE.filter((c: PaletteCommand) => c.hidden).map((c) => ({ command: c.id, when: "false" })),
  };
}
