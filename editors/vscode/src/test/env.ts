// The environment of a server a test starts: never the user's home.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** This process's environment with a user config, state and cache folder of the test's own (removed when the test
 * process exits): a server given the user's would register the test's workspaces in their
 * ~/.local/state/forge-lsp/states.json (scripts/guarded-test.mjs fails the run if one does). */
export function serverEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-home-"));
  process.on("exit", () => fs.rmSync(home, { recursive: true, force: true }));
  return {
    ...process.env,
    LITELLM_LOCAL_MODEL_COST_MAP: "True",
    XDG_CONFIG_HOME: path.join(home, "config"),
    XDG_STATE_HOME: path.join(home, "state"),
    XDG_CACHE_HOME: path.join(home, "cache"),
    XDG_DATA_HOME: path.join(home, "data"),
    ...extra,
  };
}

/** For a server whose test is not about the model path: the scripted model served without litellm (its import
 * is seconds of a core). e2e.test.ts keeps litellm's path, as a user's server has it. */
export const DIRECT: NodeJS.ProcessEnv = { FORGE_LSP_SCRIPTED: process.env.FORGE_LSP_SCRIPTED || "direct" };
