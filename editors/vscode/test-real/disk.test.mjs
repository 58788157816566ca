// Issue 35 section 1 in real VS Code (code-server 1.139, Chromium): calc.py is open and unmodified; the
// agent patches it and runs its test in the same turn, and the test passes: the extension saved the editor
// when the server asked (forge/saveDocuments), so the tab is not left dirty and Undo takes the edit back.
// Then the other direction: the agent's shell changes calc.py on disk (sed -i) and patches it again: VS Code
// reads the unmodified editor again before the patch (forge/reloadDocuments waits for it), so the patch
// applies and the tab stays clean. Then the user's own unsaved line: the agent's edit goes into the editor,
// nothing is saved, the line survives, and the user is told once; the shell's change to the file then keeps
// the line too (the model and the user are told).
//
// usage: node --test test-real/  (after `npm run package`)
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { RealVSCode, extensionDir, missing } from "./harness.mjs";

const skip = missing();
const vsix = process.env.FORGE_VSIX || path.join(extensionDir, "forge-lsp-vscode.vsix");
const python = process.env.FORGE_PYTHON || "python3";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const CALC = "def add(a, b):\n    return a - b\n";
const FIXED = "def add(a, b):\n    return a + b\n";
const TEST_CALC =
  "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";
const patch = (oldString, newString) => ({
  tool_calls: [{ name: "patch", arguments: { file_path: "calc.py", old_string: oldString, new_string: newString } }],
});
const shell = (command) => ({ tool_calls: [{ name: "shell", arguments: { command } }] });
const unittest = shell("python3 -m unittest -q test_calc");
const sed = shell("sed -i 's/a - b/a + b/' calc.py");

describe("real VS Code: the agent's edits reach the disk (issue 35)", { skip, timeout: 600_000 }, () => {
  let vs;
  let tmp;
  let ws;
  before(async () => {
    assert.ok(fs.existsSync(vsix), `no ${vsix}: run npm run package first`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-disk-"));
    ws = path.join(tmp, "project");
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "calc.py"), CALC);
    fs.writeFileSync(path.join(ws, "test_calc.py"), TEST_CALC);
    const script = path.join(tmp, "script.json");
    fs.writeFileSync(
      script,
      JSON.stringify({
        responses: [
          patch("a - b", "a + b"),
          unittest,
          { text: "Fixed." },
          sed,
          patch("a + b", "a + b  # fixed"),
          unittest,
          { text: "Fixed by the shell." },
          patch("a - b", "a + b"),
          unittest,
          { text: "Fixed?" },
          shell("echo '# the shell' >> calc.py"),
          { text: "Appended." },
        ],
      }),
    );
    vs = new RealVSCode({
      vsix,
      workspace: ws,
      name: "disk",
      settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}`, "files.autoSave": "off" },
    });
    await vs.start();
    await vs.waitStatus(/Forge: idle/);
  });
  after(async () => {
    await vs?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const calc = () => fs.readFileSync(path.join(ws, "calc.py"), "utf8");
  const editorText = async () =>
    (
      await vs.page
        .locator(".monaco-editor .view-lines")
        .first()
        .evaluate((el) =>
          [...el.querySelectorAll(".view-line")]
            .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
            .map((l) => l.textContent)
            .join("\n"),
        )
    ).replace(/\u00a0/g, " ");
  const dirtyTab = () => vs.page.locator(".tabs-container .tab.dirty", { hasText: "calc.py" });

  async function run(prompt) {
    await vs.palette("Forge: Run Agent"); // from the editor as it is (vs.command presses Escape and clicks into the page first)
    await vs.answerInput(prompt, "What should Forge do?");
  }

  it("calc.py open and unmodified: the patch is saved before the test runs, the tab is clean, Undo takes it back", async () => {
    await vs.command("Go to File...");
    await vs.page.keyboard.type("calc.py");
    await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "calc.py" }).first().waitFor({ state: "visible" });
    await vs.page.keyboard.press("Enter");
    await vs.page.locator(".monaco-editor .view-lines", { hasText: "a - b" }).first().waitFor({ state: "visible" });
    await run("fix add");
    await vs.waitToast(/^Forge: turn completed \(3 requests, 2 tool calls, 0 failures\)$/);
    await vs.shot("saved");
    assert.equal(calc(), FIXED);
    assert.match(await editorText(), /return a \+ b/);
    assert.equal(await dirtyTab().count(), 0, "the calc.py tab is left dirty");
    // No "file is newer" conflict: the save was VS Code's own.
    assert.ok(!(await vs.toasts()).some((t) => /newer|Failed to save/.test(t.text)), JSON.stringify(await vs.toasts()));
    // One Undo takes the agent's edit back (in the editor: unsaved until the user saves).
    await vs.page.locator(".monaco-editor .view-lines").first().click();
    await vs.page.keyboard.press("Control+z");
    await vs.page.locator(".monaco-editor .view-lines", { hasText: "a - b" }).first().waitFor({ state: "visible" });
    await dirtyTab().waitFor({ state: "visible" });
    await vs.shot("undone");
    await vs.page.keyboard.press("Control+s");
    const end = Date.now() + 10_000;
    while (calc() !== CALC && Date.now() < end) await sleep(100);
    assert.equal(calc(), CALC);
    await vs.clearNotifications();
  });

  it("the agent's shell changes calc.py: VS Code reads it again before the next patch, which applies; the tab stays clean", async () => {
    await run("fix add with sed");
    await vs.waitToast(/^Forge: turn completed \(4 requests, 3 tool calls, 0 failures\)$/);
    await vs.shot("shell-reloaded");
    assert.equal(calc(), "def add(a, b):\n    return a + b  # fixed\n");
    assert.match(await editorText(), /return a \+ b {2}# fixed/);
    assert.equal(await dirtyTab().count(), 0, "the calc.py tab is left dirty");
    assert.ok(!(await vs.toasts()).some((t) => /newer|Failed to save|unsaved/.test(t.text)), JSON.stringify(await vs.toasts()));
    // Back as the next test expects it: VS Code takes this change from the disk by itself.
    fs.writeFileSync(path.join(ws, "calc.py"), CALC);
    await vs.page.locator(".monaco-editor .view-lines", { hasText: "a - b" }).first().waitFor({ state: "visible" });
    await vs.clearNotifications();
  });

  it("the user's unsaved line: the edit goes into the editor, nothing is saved, the user is told", async () => {
    await vs.page.locator(".monaco-editor .view-lines").first().click();
    await vs.page.keyboard.press("Control+End");
    await vs.page.keyboard.type("# my unsaved line");
    await dirtyTab().waitFor({ state: "visible" });
    await sleep(500); // the change reaches the server
    await run("fix add again");
    await vs.waitToast(/^Forge: turn completed \(3 requests, 2 tool calls, 1 failure\)$/);
    await vs.waitToast(/calc\.py has unsaved changes of yours, so the agent's edit stays in the buffer/);
    await vs.shot("dirty-kept");
    const text = await editorText();
    assert.match(text, /return a \+ b/, text);
    assert.match(text, /# my unsaved line/, text);
    assert.equal(calc(), CALC); // never saved without the user
    assert.equal(await dirtyTab().count(), 1);
    // The model was told, in the patch's result (the turn's transcript has it).
    const transcripts = path.join(ws, ".forge", "transcripts");
    const told = fs.readdirSync(transcripts).some((f) => /calc\.py has unsaved changes in the editor/.test(fs.readFileSync(path.join(transcripts, f), "utf8")));
    assert.ok(told, "no transcript holds the note to the model");
  });

  it("the user's unsaved line, then the agent's shell changes the file: the editor keeps the line, the user is told", async () => {
    await vs.clearNotifications();
    await run("append a line");
    await vs.waitToast(/^Forge: turn completed \(2 requests, 1 tool call, 0 failures\)$/);
    await vs.waitToast(/calc\.py changed on disk \(the agent's shell call\) while it has unsaved changes of yours/);
    await vs.shot("shell-kept");
    const text = await editorText();
    assert.match(text, /# my unsaved line/, text);
    assert.doesNotMatch(text, /# the shell/, text);
    assert.equal(calc(), CALC + "# the shell\n");
    assert.equal(await dirtyTab().count(), 1);
    const transcripts = path.join(ws, ".forge", "transcripts");
    const told = fs
      .readdirSync(transcripts)
      .some((f) => /calc\.py changed on disk during this call, but the editor holds unsaved changes/.test(fs.readFileSync(path.join(transcripts, f), "utf8")));
    assert.ok(told, "no transcript holds the note to the model");
  });
});
