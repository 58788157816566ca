// Pure: VS Code settings -> what the server gets. No `vscode` import, so it is unit-tested in node.

/** The extension's settings, as read from the "forge" configuration section. */
export interface ForgeSettings {
  serverPath?: string;
  pythonPath?: string;
  model?: string | null;
  maxToolFailurePerTurn?: number | null;
  maxRequestsPerTurn?: number | null;
  trace?: { server?: string };
  mcpServers?: Record<string, unknown> | null;
}

/** Settings that only start the server; they are not part of the server's config schema. */
const CLIENT_ONLY = new Set(["serverPath", "pythonPath", "trace"]);

/** The "forge" section the server reads (workspace/configuration and initializationOptions.settings). */
export function serverSettings(settings: ForgeSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    const emptyObject = typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
    if (CLIENT_ONLY.has(key) || value === null || value === undefined || value === "" || emptyObject) {
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** What the server gets at initialize: the settings, and whether VS Code trusts the workspace.
 *
 * workspaceTrusted is VS Code's own workspace.isTrusted (the user's decision, not a setting a
 * workspace's .vscode/settings.json could write); the server takes it only from here. */
export function initializationOptions(
  settings: ForgeSettings,
  workspaceTrusted = false,
): { settings: Record<string, unknown>; workspaceTrusted: boolean } {
  return { settings: serverSettings(settings), workspaceTrusted };
}

/** How to start the server: forge.serverPath, else python -m forge_lsp, else forge-lsp on PATH. */
export function serverCommand(settings: ForgeSettings): { command: string; args: string[] } {
  if (settings.serverPath) {
    return { command: settings.serverPath, args: [] };
  }
  if (settings.pythonPath) {
    return { command: settings.pythonPath, args: ["-m", "forge_lsp"] };
  }
  return { command: "forge-lsp", args: [] };
}
