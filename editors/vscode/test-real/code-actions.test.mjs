// Issue 25 in real VS Code (code-server 1.139, Chromium): the Quick Fix menu on a TypeScript error (a
// diagnostic of VS Code's own TypeScript extension, source "ts") offers "Forge: Fix ...", which runs a
// turn whose prompt carries the diagnostic; on a selection "Forge: Edit selection…" asks for the
// instruction in an input box. Screenshots in test-real/artifacts/code-actions/.
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

/** The newest transcript's text, once one holds `needle`. */
async function transcriptWith(ws, needle, timeout = 30_000) {
  const dir = path.join(ws, ".forge", "transcripts");
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (fs.existsSync(dir)) {
      for (const f of fs.readdirSync(dir)) {
        const text = fs.readFileSync(path.join(dir, f), "utf8");
        if (text.includes(needle)) return text;
      }
    }
    await sleep(200);
  }
  throw new Error(`no transcript holds ${JSON.stringify(needle)}`);
}

describe("real VS Code: Forge's code actions", { skip, timeout: 400_000 }, () => {
  let vs;
  let tmp;
  let ws;
  before(async () => {
    assert.ok(fs.existsSync(vsix), `no ${vsix}: run npm run package first`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-actions-"));
    ws = path.join(tmp, "project");
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "app.ts"), 'const total: number = "forty-two";\nconsole.log(total);\n');
    const script = path.join(tmp, "script.json");
    fs.writeFileSync(
      script,
      JSON.stringify({ responses: [{ delay_ms: 2500, text: "Made total a number." }, { text: "Renamed total to sum." }] }),
    );
    vs = new RealVSCode({
      vsix,
      workspace: ws,
      name: "code-actions",
      settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}` },
    });
    await vs.start();
  });
  after(async () => {
    await vs?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Opens the Quick Fix menu (Ctrl+.) and picks the action whose title starts with `title`. The menu
   * lists what the providers answered when it opened: on a loaded machine the language servers may
   * not have answered yet (or the key went to a notification still closing), so it is opened again, as
   * a person would, until the action is there. `place` puts the cursor or the selection where the menu
   * is wanted, before each try: dismissing an empty menu may leave the selection gone.
   */
  async function pickOnce(title, place) {
    const page = vs.page;
    const row = page.locator(".action-widget .monaco-list-row", { hasText: title }).first();
    for (let attempt = 1; ; attempt++) {
      await place();
      await page.keyboard.press("Control+.");
      try {
        await row.waitFor({ state: "visible", timeout: 15_000 });
        break;
      } catch (err) {
        await vs.shot(`menu-without-forge-${attempt}`);
        if (attempt === 4) throw err;
        await page.keyboard.press("Escape");
        await sleep(1000);
      }
    }
    // The menu fills in as the providers answer (TypeScript's refactorings, VS Code's own Fix / Explain): a click
    // while its rows move lands on another row, or none. Clicked once its rows stayed the same for a moment.
    const rows = page.locator(".action-widget .monaco-list-row");
    let seen = "";
    for (const end = Date.now() + 5_000; Date.now() < end; ) {
      const now = (await rows.allInnerTexts()).join("\n");
      if (now === seen) break;
      seen = now;
      await sleep(400);
    }
    await vs.shot(`menu-${title.replace(/\W+/g, "-").toLowerCase()}`);
    // Picked with the keyboard, as the focused row: a click landed on a menu still moving (providers answering)
    // left it open, or closed it running nothing (s73: no turn, no notification). The hovered row is the focused
    // one; Enter accepts the focused row only once it is this one.
    const focused = page.locator(".action-widget .monaco-list-row.focused").first();
    for (let i = 0; ; i++) {
      await row.hover();
      const now = await focused.innerText({ timeout: 1_000 }).catch(() => "");
      if (now.includes(title)) break;
      if (i === 20) throw new Error(`the Quick Fix row "${title}" never had the focus (focused: ${JSON.stringify(now)})`);
      await sleep(200);
    }
    await page.keyboard.press("Enter");
    await page.locator(".action-widget").first().waitFor({ state: "hidden", timeout: 5_000 });
  }

  /**
   * Picks the action (pickOnce), and picks it again (three picks at most) when `ran` finds it did not run.
   * VS Code asks for the code actions again as its menu closes, and may release the list the pick came from
   * while it resolves the pick (codeAction/resolve): the resolved command is then gone ("Actual command not
   * found, wanted to execute forge.editSelection", VS Code's own error; in s73 and in 7 of 16 runs here, nothing
   * ran). A person whose pick did nothing picks again.
   */
  async function quickFix(title, place, ran) {
    for (let attempt = 1; ; attempt++) {
      await pickOnce(title, place);
      try {
        return await ran();
      } catch (err) {
        await vs.shot(`pick-did-nothing-${attempt}`);
        if (attempt === 3) throw err;
      }
    }
  }

  it("a TypeScript error's Quick Fix menu offers Forge: Fix, which runs a turn carrying the diagnostic", async () => {
    await vs.waitStatus(/Forge: idle/);
    await vs.command("Go to File...");
    await vs.page.keyboard.type("app.ts");
    await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "app.ts" }).first().waitFor({ state: "visible" });
    await vs.page.keyboard.press("Enter");
    // VS Code's TypeScript extension publishes the error (source "ts", code 2322).
    await vs.page.locator(".monaco-editor .squiggly-error").first().waitFor({ state: "attached", timeout: 120_000 });
    // The extension runs it like Forge: Run Agent: a progress notification with Cancel.
    const progress = await quickFix(
      "Forge: Fix Type 'string' is not assignable to type 'number'",
      async () => {
        await vs.page.locator(".monaco-editor .view-lines").first().click();
        await vs.page.keyboard.press("Control+Home");
        for (let i = 0; i < 8; i++) await vs.page.keyboard.press("ArrowRight"); // on "total", where the error is
      },
      () => vs.waitToast(/^Forge/, 15_000),
    );
    assert.ok(progress.buttons.includes("Cancel"), JSON.stringify(progress));
    await vs.waitToast(/^Forge: turn completed \(1 request, 0 tool calls, 0 failures\)$/);
    await vs.shot("fix-completed");
    const text = await transcriptWith(ws, "Made total a number.");
    assert.match(text, /Fix this problem in app\.ts at line 1/);
    assert.match(text, /source: ts, code: 2322/);
    assert.match(text, /> 1 \| const total: number = "forty-two";/);
    assert.match(text, /- file: app\.ts/);
  });

  it("on a selection, Forge: Edit selection… asks for the instruction, then runs a turn on the lines", async () => {
    await vs.clearNotifications();
    await quickFix(
      "Forge: Edit selection",
      async () => {
        await vs.page.locator(".monaco-editor .view-lines").first().click();
        await vs.page.keyboard.press("Control+Home");
        await vs.page.keyboard.press("Shift+ArrowDown");
        await vs.page.keyboard.press("Shift+End");
      },
      () => vs.page.locator(".quick-input-widget", { hasText: "Forge: edit the selection how?" }).waitFor({ state: "visible", timeout: 15_000 }),
    );
    await vs.answerInput("rename total to sum", "Forge: edit the selection how?");
    await vs.waitToast(/^Forge: turn completed \(1 request, 0 tool calls, 0 failures\)$/);
    await vs.shot("edit-completed");
    const text = await transcriptWith(ws, "Renamed total to sum.");
    assert.match(text, /Edit the selected code: rename total to sum/);
    assert.match(text, /selected lines 1-2 of app\.ts/);
    assert.match(text, /- range: lines 1-2/);
  });
});
