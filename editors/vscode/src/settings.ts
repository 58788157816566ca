// Pure: VS Code settings -> what the server gets. No `vscode` import, so it is unit-tested in node.
import * as path from "node:path";

/** The extension's settings, as read from the "forge" configuration section. */
export interface ForgeSettings {
  serverPath?: string;
  pythonPath?: string;
  model?: string | null;
  maxToolFailurePerTurn?: number | null;
  maxRequestsPerTurn?: number | null;
  maxRepeatedCallsPerTurn?: number | null;
  trace?: { server?: string };
  mcpServers?: Record<string, unknown> | null;
  /** [verify]: forge.verify.diagnostics (off, report, fail), sent only when set. */
  verify?: { diagnostics: string };
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

/** Where command runs from: a path as it is, a bare name in the first folder of pathVar that has it as an
 * executable file; undefined when none does. */
export function findExecutable(command: string, pathVar: string, isExecutable: (file: string) => boolean): string | undefined {
  const names = process.platform === "win32" ? [command, `${command}.exe`, `${command}.cmd`] : [command];
  if (command.includes("/") || command.includes("\\")) {
    return names.find(isExecutable);
  }
  for (const dir of pathVar.split(path.delimiter)) {
    const found = dir ? names.map((name) => path.join(dir, name)).find(isExecutable) : undefined;
    if (found) {
      return found;
    }
  }
  return undefined;
}

const PRINT = "`forge-lsp --print-editor-config`, run where forge-lsp is installed, prints it";

/** Why the server cannot start with these settings (its command is not there), as one line that says what to
 * set; undefined when it can start. An editor's PATH is not the shell's: a virtual environment that is not
 * active here (the README's install) is found only by forge.serverPath. */
export function serverProblem(settings: ForgeSettings, pathVar: string, isExecutable: (file: string) => boolean): string | undefined {
  const { command } = serverCommand(settings);
  if (findExecutable(command, pathVar, isExecutable)) {
    return undefined;
  }
  if (settings.serverPath) {
    return `Forge: forge.serverPath ${command} is not an executable file: set it to the forge-lsp of the environment forge-lsp is installed in (${PRINT}).`;
  }
  if (settings.pythonPath) {
    return `Forge: forge.pythonPath ${command} is not an executable file: set it to a Python that has forge-lsp, or set forge.serverPath (${PRINT}).`;
  }
  return `Forge: forge-lsp is not on PATH: set forge.serverPath to the forge-lsp of the environment you installed it in (${PRINT}).`;
}
