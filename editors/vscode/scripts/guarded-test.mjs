// Runs `node --test PATHS...` and fails when a test touched the user's home: afterwards, no file of the user's
// forge-lsp folders (config, state) may name a folder of the run. A server a test starts without folders of
// its own (src/test/env.ts serverEnv) registers its workspace in ~/.local/state/forge-lsp/states.json.
//
// The run's temporary folders are found by TMPDIR: every os.tmpdir() of the run is one fresh folder, removed after.
// Nothing the user does meanwhile (their own editor's server writes the same files) names it.
//
// usage: node scripts/guarded-test.mjs out/test/   (npm test)
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The user's forge-lsp folders that record paths, as this environment names them: config and state (trust
 * decisions, the registry of state files). The cache holds compiled templates (and test-real's VS Code install). */
function userFolders(env) {
  const home = env.HOME || os.homedir();
  return [
    path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "forge-lsp"),
    path.join(env.XDG_STATE_HOME || path.join(home, ".local", "state"), "forge-lsp"),
  ];
}

/** "FILE: MARK" for each file under folders whose path or text (its first 4 MB) holds mark. */
function mentions(folders, mark) {
  const found = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(file);
      } else if (entry.isFile()) {
        let text = "";
        try {
          const fd = fs.openSync(file, "r");
          const buf = Buffer.alloc(4 * 1024 * 1024);
          text = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
          fs.closeSync(fd);
        } catch {
          continue;
        }
        if (text.includes(mark) || file.includes(mark)) {
          found.push(`${file}: ${mark}`);
        }
      }
    }
  };
  folders.forEach(walk);
  return found;
}

function main() {
  const paths = process.argv.slice(2);
  const run = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-test-run-")));
  const folders = userFolders(process.env);
  const before = new Set(mentions(folders, run));
  // Each test file's process ends once its tests have (node 20.14+): a handle a failed test left open (a loop, a
  // timer) would otherwise keep it, and the whole run, waiting.
  const [major, minor] = process.versions.node.split(".").map(Number);
  const forceExit = major >= 22 || (major === 20 && minor >= 14) ? ["--test-force-exit"] : [];
  const done = spawnSync(process.execPath, ["--test", ...forceExit, ...paths], {
    env: { ...process.env, TMPDIR: run, TMP: run, TEMP: run },
    stdio: "inherit",
  });
  const touched = mentions(folders, run).filter((m) => !before.has(m));
  fs.rmSync(run, { recursive: true, force: true });
  if (touched.length > 0) {
    console.error(`guarded-test: a test wrote into the user's forge-lsp folders (give its server folders of its own: src/test/env.ts):\n  ${touched.join("\n  ")}`);
    process.exit(1);
  }
  process.exit(done.status ?? 1);
}

main();
