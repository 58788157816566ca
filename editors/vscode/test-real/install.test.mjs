// Issue 35 in real VS Code (code-server 1.139, Chromium): the README's install, a virtual environment that is not
// on the editor's PATH. With no forge.serverPath the extension says in one error what to set, with Open Settings
// (not the language client's "Launching server ... failed" and "couldn't create connection"); once the setting
// names the venv's forge-lsp, the server starts. Forge: Cancel then says what the server stopped.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { RealVSCode, extensionDir, missing } from "./harness.mjs";

const skip = missing();
const vsix = process.env.FORGE_VSIX || path.join(extensionDir, "forge-lsp-vscode.vsix");
const python = process.env.FORGE_PYTHON || "python3";
// The venv's own forge-lsp (pip install -e . put it beside its python), as --print-editor-config names it.
const serverPath = path.join(path.dirname(python), "forge-lsp");
const PATH = "/usr/local/bin:/usr/bin:/bin";

describe("real VS Code: the install story", { skip, timeout: 600_000 }, () => {
  let vs;
  let tmp;
  before(async () => {
    assert.ok(fs.existsSync(vsix), `no ${vsix}: run npm run package first`);
    assert.ok(fs.existsSync(serverPath), `no ${serverPath}: FORGE_PYTHON must be a virtual environment's python`);
    assert.ok(!PATH.split(":").some((d) => fs.existsSync(path.join(d, "forge-lsp"))), "forge-lsp is on the test's PATH");
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-install-"));
    const ws = path.join(tmp, "project");
    fs.mkdirSync(ws);
    const script = path.join(tmp, "script.json");
    fs.writeFileSync(script, JSON.stringify({ responses: [{ tool_calls: [{ name: "shell", arguments: { command: "sleep 30.5" } }] }] }));
    // A home of its own: code-server takes the editor's PATH from the user's login shell (VS Code's "resolve the
    // shell environment"), and a ~/.bashrc that puts a pyenv or another forge-lsp on it (as CI's, which installs
    // into the system python) would find a forge-lsp where a newcomer's editor has none.
    const home = path.join(tmp, "home");
    fs.mkdirSync(home);
    vs = new RealVSCode({ vsix, workspace: ws, name: "install", settings: { "forge.model": `scripted/${script}` }, env: { PATH, HOME: home } });
    await vs.start();
  });
  after(async () => {
    await vs?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("says in one error what to set when forge-lsp is not on the editor's PATH", async () => {
    const toast = await vs.waitToast(/^Forge: forge-lsp is not on PATH: set forge\.serverPath/);
    await vs.shot("not-on-path");
    assert.ok(toast.text.includes("forge-lsp --print-editor-config"), toast.text);
    assert.deepEqual(toast.buttons, ["Open Settings"]);
    const all = await vs.toasts();
    assert.ok(!all.some((t) => /Launching server|couldn't create connection/.test(t.text)), JSON.stringify(all));
    await vs.waitStatus(/Forge: not started/);
  });

  it("starts the server once forge.serverPath names the venv's forge-lsp", async () => {
    await vs.pressNotificationButton(/^Forge: forge-lsp is not on PATH/, "Open Settings");
    // Where it can be set: code-server is a remote window and forge.serverPath a machine setting: the remote's
    // settings.json opens, and the line `forge-lsp --print-editor-config` printed is pasted into it and saved.
    const page = vs.page;
    await page.locator(".breadcrumbs-control", { hasText: "Machine" }).first().waitFor({ state: "visible" });
    // The settings.json editor (its "{}"), once shown: not the chat box, whose editor may come last in the page
    // (a click there before the settings' editor was drawn typed the line into the chat).
    await page.locator(".monaco-editor .view-lines", { hasText: "{}" }).last().click({ force: true });
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(`{\n  "forge.serverPath": ${JSON.stringify(serverPath)}\n}\n`);
    await page.locator(".monaco-editor .view-lines", { hasText: "forge.serverPath" }).first().waitFor({ state: "visible" });
    await page.keyboard.press("Control+S");
    await vs.shot("pasted");
    await vs.waitStatus(/Forge: idle/);
    await vs.shot("started");
  });

  it("Forge: Cancel says what the server stopped", async () => {
    await vs.command("Forge: Run Agent");
    await vs.answerInput("wait", "What should Forge do?");
    await vs.waitToast(/^Forge: shell: sleep 30\.5$/);
    await vs.command("Forge: Cancel");
    await vs.waitToast(/^Forge: turn cancelled; the running shell command was killed \(sleep 30\.5\)$/);
    await vs.shot("cancelled");
    const cancelled = (await vs.toasts()).filter((t) => /^Forge: turn cancelled/.test(t.text));
    assert.equal(cancelled.length, 1, JSON.stringify(cancelled)); // one notification, not the generic one as well
  });
});
