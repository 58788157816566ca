// The extension in real VS Code: code-server 1.139 in Chromium, the built .vsix installed, every step
// done the way a user does it (palette, input box, notification buttons, settings) and read back from
// the page (Problems panel, status bar, notifications). A screenshot of each step is kept in
// test-real/artifacts/<session>/.
//
// usage: node --test test-real/  (after `npm run package`; FORGE_VSIX names another .vsix)
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { RealVSCode, artifactsDir, extensionDir, missing } from "./harness.mjs";

const skip = missing();
const vsix = process.env.FORGE_VSIX || path.join(extensionDir, "forge-lsp-vscode.vsix");
const python = process.env.FORGE_PYTHON || "python3";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A sleep no other process on the machine runs, so the test finds exactly the agent's.
const SLEEP_ARG = `30.${process.pid}`;

function sleepPids() {
  const pids = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      if (argv[0].endsWith("sleep") && argv[1] === SLEEP_ARG && !/\) Z /.test(stat)) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const fail = (text) => ({ ...(text ? { text } : {}), tool_calls: [{ name: "shell", arguments: { command: "exit 1" } }] });

describe("real VS Code (code-server 1.139, Chromium)", { skip, timeout: 600_000 }, () => {
  describe("a trusted workspace, a scripted model in the user's settings", () => {
    let vs;
    let tmp;
    const markers = (list, code) => list.filter((m) => m.text.includes(code));
    before(async () => {
      assert.ok(fs.existsSync(vsix), `no ${vsix}: run npm run package first`);
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-ws-"));
      const ws = path.join(tmp, "project");
      fs.mkdirSync(ws);
      fs.writeFileSync(path.join(ws, "README.md"), "# project\n");
      const script = path.join(tmp, "script.json");
      fs.writeFileSync(
        script,
        JSON.stringify({
          responses: [
            // turn 1: shell fails three times (the second answer is slow, so the retry progress stays up)
            fail("Let me run the build."),
            { delay_ms: 4000, ...fail() },
            fail(),
            // turn 2 (Continue)
            { text: "Recovered after the interrupt." },
            // turn 3: a long command, cancelled from the notification
            { tool_calls: [{ name: "shell", arguments: { command: `sleep ${SLEEP_ARG}` } }] },
            // turn 4: forge.maxToolFailurePerTurn = 1
            fail("One more try."),
          ],
        }),
      );
      vs = new RealVSCode({
        vsix,
        workspace: ws,
        name: "trusted",
        settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}` },
        env: { FORGE_LSP_SCRIPTED: "litellm" }, // the model path as a user's: litellm, its warm-up, its retries
      });
      await vs.start();
    });
    after(async () => {
      await vs?.stop();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it("installs the .vsix and activates: the status bar shows Forge idle", async () => {
      assert.match(vs.installOutput, /Extension 'forge-lsp-vscode\.vsix' was successfully installed/);
      await vs.waitStatus(/Forge: idle/);
      await vs.shot("activated");
    });

    it("reports its activation time in Developer: Show Running Extensions", async () => {
      const ms = await vs.activationTime("Forge (forge-lsp)");
      await vs.shot("running-extensions");
      console.log(`# activation time of the Forge extension in VS Code 1.139: ${ms} ms`);
      fs.writeFileSync(path.join(artifactsDir, "activation-ms.txt"), `${ms}\n`);
      assert.ok(ms > 0 && ms < 5000, `activation took ${ms} ms`);
      await vs.closeEditors();
    });

    it("Forge: Run Agent from the palette: the progress notification shows the retry, with Cancel", async () => {
      await vs.command("Forge: Run Agent");
      await vs.shot("palette-prompt");
      await vs.answerInput("fix the build", "What should Forge do?");
      const toast = await vs.waitToast(/^Forge: retry 2\/3 shell$/);
      assert.deepEqual(toast.buttons, ["Cancel"]);
      await vs.waitStatus(/Forge: retry, 2 left \(shell\)/);
      await vs.shot("progress-retry");
    });

    it("the interrupt: Problems has the tool-retry warnings and the limit error; Continue is offered", async () => {
      const toast = await vs.waitToast(/Maximum tool failure limit \(3\) reached for this turn: shell \(3\)/);
      assert.deepEqual(toast.buttons, ["Continue"]);
      await vs.waitStatus(/Forge: interrupted/);
      await vs.shot("interrupt-notification");
      const problems = await vs.waitProblems((p) => markers(p, "tool-retry").length === 3);
      await vs.shot("problems-interrupt");
      const retries = markers(problems, "tool-retry");
      assert.deepEqual(
        retries.map((m) => m.severity),
        ["warning", "warning", "warning"],
      );
      for (const left of [2, 1, 0]) {
        assert.ok(
          retries.some((m) => m.text.includes(`shell failed: command exited with code 1 (attempts remaining: ${left} of 3)`)),
          JSON.stringify(retries),
        );
      }
      const limit = markers(problems, "max-tool-failure-per-turn");
      assert.equal(limit.length, 1, JSON.stringify(problems));
      assert.equal(limit[0].severity, "error");
      assert.match(limit[0].text, /Maximum tool failure limit \(3\) reached for this turn: shell \(3\)/);
    });

    it("Continue starts a new turn, which completes and clears the last turn's problems", async () => {
      await vs.pressNotificationButton(/Maximum tool failure limit \(3\)/, "Continue");
      await vs.waitToast(/^Forge: turn completed \(1 request, 0 tool calls, 0 failures\)$/);
      await vs.waitStatus(/Forge: idle/);
      await vs.waitProblems((p) => markers(p, "forge").length === 0);
      await vs.shot("continue-completed");
      await vs.clearNotifications();
    });

    it("Cancel on the progress notification stops the turn and kills the running sleep", async () => {
      await vs.command("Forge: Run Agent");
      await vs.answerInput("wait for it", "What should Forge do?");
      await vs.waitToast(new RegExp(`^Forge: shell: sleep ${SLEEP_ARG.replace(".", "\\.")}$`));
      const end = Date.now() + 20_000;
      while (sleepPids().length === 0) {
        assert.ok(Date.now() < end, "the agent's sleep never started");
        await sleep(100);
      }
      await vs.shot("sleep-running");
      const started = Date.now();
      await vs.pressNotificationButton(/^Forge: shell: sleep/, "Cancel");
      // What the server stopped, from forge.cancel's answer: the one notification of the cancelled turn.
      await vs.waitToast(new RegExp(`^Forge: turn cancelled; the running shell command was killed \\(sleep ${SLEEP_ARG.replace(".", "\\.")}\\)$`));
      while (sleepPids().length > 0) {
        assert.ok(Date.now() - started < 10_000, `sleep still running: ${sleepPids()}`);
        await sleep(100);
      }
      await vs.waitStatus(/Forge: idle/);
      await vs.shot("cancelled");
      await vs.clearNotifications();
    });

    it("a changed forge.maxToolFailurePerTurn applies to the next turn", async () => {
      await vs.setSetting("forge.maxToolFailurePerTurn", 1);
      await vs.shot("settings-limit-1");
      await vs.closeEditors();
      await vs.command("Forge: Run Agent");
      await vs.answerInput("try once", "What should Forge do?");
      const toast = await vs.waitToast(/Maximum tool failure limit \(1\) reached for this turn: shell \(1\)/);
      assert.deepEqual(toast.buttons, ["Continue"]);
      const problems = await vs.waitProblems((p) => markers(p, "max-tool-failure-per-turn").length === 1);
      await vs.shot("problems-limit-1");
      const retries = markers(problems, "tool-retry");
      assert.equal(retries.length, 1, JSON.stringify(problems));
      assert.match(retries[0].text, /attempts remaining: 0 of 1/);
      assert.match(markers(problems, "max-tool-failure-per-turn")[0].text, /limit \(1\)/);
    });
  });

  describe("conversations and usage (issue 12): Forge: Open Conversation, the status bar's tokens; Forge: Run Command…", () => {
    let vs;
    let tmp;
    let ws;
    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-conv-"));
      ws = path.join(tmp, "project");
      fs.mkdirSync(ws);
      // A workspace command (issue 27): trusted here, so Forge: Run Command… offers it.
      fs.mkdirSync(path.join(ws, ".forge", "commands"), { recursive: true });
      fs.writeFileSync(
        path.join(ws, ".forge", "commands", "greet.md"),
        "---\ndescription: Greet someone in French\n---\nSay hello to {{args}} in French.\n",
      );
      const script = path.join(tmp, "script.json");
      const usage = (p, c) => ({ usage: { prompt_tokens: p, completion_tokens: c } });
      fs.writeFileSync(
        script,
        JSON.stringify({
          responses: [
            { text: "Alpha done.", ...usage(1200, 34) },
            { text: "Beta done.", ...usage(700, 50) },
            { text: "Alpha again.", ...usage(900, 10) },
            { text: "Bonjour, Ada." },
          ],
        }),
      );
      vs = new RealVSCode({
        vsix,
        workspace: ws,
        name: "conversations",
        // forge.tools is no setting the extension declares (docs/config.md: it does not reach the server).
        settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}`, "forge.tools": { shell: { maxFailures: 1 } } },
      });
      await vs.start();
    });
    after(async () => {
      await vs?.stop();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    async function run(prompt) {
      await vs.command("Forge: Run Agent");
      await vs.answerInput(prompt, "What should Forge do?");
      await vs.waitToast(/^Forge: turn completed \(1 request, 0 tool calls, 0 failures\)$/);
      await vs.clearNotifications();
    }
    /** The rows of the Open Conversation quick pick: [{label, description}]. */
    async function pickRows() {
      await vs.command("Forge: Open Conversation");
      const rows = vs.page.locator(".quick-input-widget .monaco-list-row");
      await rows.first().waitFor({ state: "visible" });
      await sleep(300);
      return rows.evaluateAll((els) =>
        els.map((el) => ({
          label: el.querySelector(".label-name")?.textContent ?? "",
          description: el.querySelector(".label-description")?.textContent ?? "",
        })),
      );
    }

    it("after a turn the status bar shows its tokens and cost: Forge: idle · 1.2k tokens, cost unknown", async () => {
      await vs.waitStatus(/Forge: idle/);
      await run("alpha task");
      // 1200 prompt + 34 completion tokens; a scripted model is in no cost map.
      const text = await vs.waitStatus(/Forge: idle ·/);
      await vs.shot("status-usage");
      assert.equal(text.trim(), "Forge: idle · 1.2k tokens, cost unknown");
    });

    it("Forge: Open Conversation lists both conversations by their first prompt; picking the first continues it", async () => {
      await vs.command("Forge: New Conversation");
      await run("beta task");
      assert.equal((await vs.waitStatus(/Forge: idle ·/)).trim(), "Forge: idle · 750 tokens, cost unknown");
      let rows = await pickRows();
      await vs.shot("open-conversation-pick");
      assert.deepEqual(rows.map((r) => r.label).sort(), ["alpha task", "beta task"], JSON.stringify(rows));
      const first = Object.fromEntries(rows.map((r) => [r.label, r.description]));
      assert.equal(first["alpha task"], "1 turn, completed, 1.2k tokens");
      assert.equal(first["beta task"], "1 turn, completed, 750 tokens");
      await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "alpha task" }).first().click();
      await vs.waitToast(/^Forge: conversation "alpha task" is open; the next run continues it\.$/);
      await vs.clearNotifications();
      await run("alpha follow-up");
      assert.equal((await vs.waitStatus(/Forge: idle ·/)).trim(), "Forge: idle · 910 tokens, cost unknown");
      rows = await pickRows();
      await vs.shot("open-conversation-continued");
      await vs.page.keyboard.press("Escape");
      const by = Object.fromEntries(rows.map((r) => [r.label, r.description]));
      assert.deepEqual(Object.keys(by).sort(), ["alpha task", "beta task"], JSON.stringify(rows));
      // The follow-up went to alpha (2 turns, 1234 + 910 tokens), not to beta, the conversation open before.
      assert.equal(by["alpha task"], "2 turns, completed, 2.1k tokens");
      assert.equal(by["beta task"], "1 turn, completed, 750 tokens");
    });

    it("Forge: Show Config: what the server got of the forge.* settings", async () => {
      await vs.command("Forge: Show Config");
      const end = Date.now() + 20_000;
      let log = "";
      while (Date.now() < end && !log.includes("Effective Forge configuration:")) {
        log = vs.forgeLog();
        await sleep(300);
      }
      await vs.shot("show-config");
      const lines = log.split("\n").filter((l) => /^\s+(model|tools\.shell\.max_failures|max_tool_failure_per_turn) = /.test(l));
      console.log(`# Show Config:\n${lines.join("\n")}`);
      // The declared forge.model arrives; forge.tools, declared by no setting of the extension, does not
      // (docs/config.md says so): the extension sends only the keys it declares.
      assert.ok(lines.some((l) => /^\s+model = "scripted\/.*" \(editor\)$/.test(l)), log);
      assert.ok(lines.includes("  tools.shell.max_failures = null (default)"), log);
    });

    it("Forge: Run Command… lists the commands; picking /greet and typing its arguments runs it", async () => {
      await vs.closeEditors();
      await vs.command("Forge: Run Command…");
      const rows = vs.page.locator(".quick-input-widget .monaco-list-row");
      await rows.first().waitFor({ state: "visible" });
      await sleep(300);
      const labels = await rows.evaluateAll((els) => els.map((el) => el.querySelector(".label-name")?.textContent ?? ""));
      await vs.shot("run-command-pick");
      assert.deepEqual(labels, ["/explain", "/greet", "/review", "/test"], JSON.stringify(labels));
      await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "/greet" }).first().click();
      await vs.shot("run-command-args");
      await vs.answerInput("Ada", "Arguments for /greet");
      await vs.waitToast(/^Forge: turn completed \(1 request, 0 tool calls, 0 failures\)$/);
      await vs.shot("run-command-done");
      // The server expanded it: the turn's prompt is the command's, with the arguments in it.
      const dir = path.join(ws, ".forge", "transcripts");
      const prompts = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8"));
      assert.ok(prompts.some((t) => t.includes("## Prompt\n\nSay hello to Ada in French.")), prompts.join("\n---\n"));
    });
  });

  describe("undo a turn (issue 25): Forge: Undo Last Turn", () => {
    let vs;
    let tmp;
    let ws;
    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-undo-"));
      ws = path.join(tmp, "project");
      fs.mkdirSync(ws);
      fs.writeFileSync(path.join(ws, "app.py"), "port = 8080\n");
      fs.writeFileSync(path.join(ws, "lib.py"), "debug = False\n");
      const script = path.join(tmp, "script.json");
      const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });
      fs.writeFileSync(
        script,
        JSON.stringify({
          responses: [
            call("patch", { file_path: "app.py", old_string: "port = 8080", new_string: "port = 9090" }),
            call("patch", { file_path: "lib.py", old_string: "debug = False", new_string: "debug = True" }),
            call("write", { file_path: "new.py", content: "made = 1\n" }),
            { text: "Changed the port, turned debug on, added new.py." },
          ],
        }),
      );
      vs = new RealVSCode({ vsix, workspace: ws, name: "undo", settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}` } });
      await vs.start();
    });
    after(async () => {
      await vs?.stop();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    /** The text of the editor on screen (its visible lines). */
    async function editorText() {
      return (await vs.page.locator(".editor-instance .view-lines").first().innerText()).replace(/\u00a0/g, " ");
    }

    it("the palette command puts back the open editor (through an edit) and the files on disk, and says so", async () => {
      await vs.waitStatus(/Forge: idle/);
      // app.py open in an editor: the agent's edit and the undo go through the editor, not the disk.
      await vs.page.keyboard.press("Control+P");
      const input = vs.page.locator(".quick-input-widget .quick-input-box input");
      await input.waitFor({ state: "visible" });
      await input.fill("app.py");
      await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "app.py" }).first().waitFor({ state: "visible" });
      await vs.page.keyboard.press("Enter");
      await vs.page.locator(".editor-instance .view-lines", { hasText: "port = 8080" }).first().waitFor({ state: "visible" });
      await vs.command("Forge: Run Agent");
      await vs.answerInput("change the port", "What should Forge do?");
      await vs.waitToast(/^Forge: turn completed/);
      await vs.page.locator(".editor-instance .view-lines", { hasText: "port = 9090" }).first().waitFor({ state: "visible" });
      assert.equal(fs.readFileSync(path.join(ws, "lib.py"), "utf8"), "debug = True\n");
      assert.ok(fs.existsSync(path.join(ws, "new.py")));
      await vs.shot("undo-before");
      await vs.clearNotifications();
      await vs.command("Forge: Undo Last Turn");
      const told = await vs.waitToast(/^Forge: undid the last turn: /);
      await vs.page.locator(".editor-instance .view-lines", { hasText: "port = 8080" }).first().waitFor({ state: "visible" });
      await vs.shot("undo-after");
      assert.equal(told.text, "Forge: undid the last turn: restored app.py, restored lib.py, removed new.py.");
      assert.match(await editorText(), /port = 8080/);
      assert.equal(fs.readFileSync(path.join(ws, "lib.py"), "utf8"), "debug = False\n");
      assert.ok(!fs.existsSync(path.join(ws, "new.py")));
      // The same turn again: nothing to put back, and it says why.
      await vs.clearNotifications();
      await vs.command("Forge: Undo Last Turn");
      const again = await vs.waitToast(/already undone/);
      await vs.shot("undo-again");
      assert.match(again.text, /^Forge: turn \S+ was already undone/);
    });
  });

  describe("an untrusted workspace (Workspace Trust on, the user answers No)", () => {
    let vs;
    let ws;
    const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, "package.json"), "utf8"));
    const untrusted = manifest.capabilities?.untrustedWorkspaces?.supported;
    before(async () => {
      ws = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-untrusted-"));
      // The repository picks a scripted model: it would decide every tool call the agent makes.
      fs.writeFileSync(path.join(ws, ".forge.toml"), 'model = "scripted/script.json"\n');
      fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses: [{ tool_calls: [{ name: "shell", arguments: { command: "touch pwned" } }] }] }));
      vs = new RealVSCode({ vsix, workspace: ws, name: "untrusted", trust: true, settings: { "forge.pythonPath": python } });
      await vs.start();
      const dialog = vs.page.locator(".monaco-dialog-box", { hasText: "Do you trust the authors of the files in this folder?" });
      await dialog.waitFor({ state: "visible" });
      await vs.shot("trust-prompt");
      await dialog.locator(".monaco-button", { hasText: "No, I don't trust the authors" }).click();
      await vs.waitStatus(/Restricted Mode/);
    });
    after(async () => {
      await vs?.stop();
      if (ws) fs.rmSync(ws, { recursive: true, force: true });
    });

    it(
      untrusted
        ? `runs in Restricted Mode (untrustedWorkspaces: ${untrusted}) and ignores the workspace's scripted model`
        : "stays disabled in Restricted Mode (the manifest declares no untrustedWorkspaces support)",
      async () => {
        if (!untrusted) {
          await sleep(3000); // an extension that VS Code had activated would show its status item by now
          assert.ok(!(await vs.statusBar()).some((t) => t.includes("Forge:")), JSON.stringify(await vs.statusBar()));
          await vs.page.keyboard.press("F1");
          await vs.page.locator(".quick-input-widget .quick-input-box input").fill(">Forge: Run Agent");
          await sleep(1000);
          const rows = await vs.page.locator(".quick-input-widget .monaco-list-row").allInnerTexts();
          assert.ok(!rows.some((r) => r.includes("Forge: Run Agent")), JSON.stringify(rows));
          await vs.shot("restricted-no-forge");
          await vs.page.keyboard.press("Escape");
          return;
        }
        await vs.waitStatus(/Forge: idle/);
        const problems = await vs.waitProblems((p) => p.some((m) => /trust/i.test(m.text) && /model/.test(m.text)));
        await vs.shot("restricted-problems");
        assert.ok(problems.length >= 1);
        await vs.command("Forge: Run Agent");
        await vs.answerInput("do it", "What should Forge do?");
        await vs.waitToast(/model/i);
        await vs.shot("restricted-run");
        assert.ok(!fs.existsSync(path.join(ws, "pwned")), "the workspace's script ran a command");
      },
    );
  });

  describe("@forge in the Chat view", () => {
    let vs;
    let tmp;
    let ws;
    const chat = () => vs.page.locator(".part.auxiliarybar");
    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-chat-"));
      ws = path.join(tmp, "project");
      fs.mkdirSync(ws);
      fs.mkdirSync(path.join(ws, ".forge", "commands"), { recursive: true });
      fs.writeFileSync(path.join(ws, ".forge", "commands", "greet.md"), "---\ndescription: Greet\n---\nSay hello to {{args}} in French.\n");
      const script = path.join(tmp, "script.json");
      fs.writeFileSync(
        script,
        JSON.stringify({
          responses: [
            fail("Let me run the build."),
            { tool_calls: [{ name: "write", arguments: { file_path: "notes.md", content: "build notes\n" } }] },
            { delay_ms: 1500, ...fail() },
            fail(),
            fail(),
            { text: "Recovered after the interrupt." },
            { text: "It is the readme." },
            { text: "Bonjour, Ada." },
          ],
        }),
      );
      vs = new RealVSCode({ vsix, workspace: ws, name: "chat", settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}` } });
      await vs.start();
    });
    after(async () => {
      await vs?.stop();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    const ask = (text) => vs.chatSend(text);
    async function responseText(re, timeout = 60_000) {
      const end = Date.now() + timeout;
      let text = "";
      while (Date.now() < end) {
        text = await chat().locator(".interactive-list").innerText().catch(() => "");
        if (re.test(text)) return text;
        await sleep(200);
      }
      throw new Error(`the chat never showed ${re}:\n${text}`);
    }

    it("the model picker offers Forge (the registered language model)", async () => {
      await vs.waitStatus(/Forge: idle/);
      await chat().getByText("Forge", { exact: true }).first().waitFor({ state: "visible" });
      await vs.shot("chat-model-forge");
    });

    it("@forge runs a turn: progress with the retry, the edited file as a reference, the interrupt with Continue", async () => {
      // What the response shows while it streams (once it ends VS Code folds the steps away).
      const seen = new Set();
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const t = await chat().locator(".interactive-list").innerText().catch(() => "");
          t.split("\n").forEach((l) => seen.add(l.trim()));
          await sleep(50);
        }
      })();
      let text;
      try {
        await ask("@forge fix the build");
        await responseText(/retry 2\/3 shell/);
        await vs.shot("chat-progress-retry");
        text = await responseText(/Interrupted: Maximum tool failure limit \(3\) reached for this turn: shell \(3\)/);
      } finally {
        // Also when the turn never showed: a watcher left looping keeps this test file's process alive after its
        // tests, and the whole run then waits on it (seen once: a failed run hung).
        watching = false;
        await watcher;
      }
      assert.ok(fs.existsSync(path.join(ws, "notes.md")));
      const button = chat().locator(".interactive-item-container .monaco-button", { hasText: "Continue" }).last();
      await button.waitFor({ state: "visible" });
      assert.match(text, /Let me run the build\./);
      for (const line of ["shell: exit 1", "retry 2/3 shell", "write: notes.md", "Used 1 reference"]) {
        assert.ok(seen.has(line), `${line} never shown: ${JSON.stringify([...seen])}`);
      }
      await vs.shot("chat-interrupt");
      assert.match(text, /Let me run the build\./);
    });

    it("Continue in the chat starts a new turn there", async () => {
      await chat().locator(".interactive-item-container .monaco-button", { hasText: "Continue" }).last().click();
      await responseText(/Recovered after the interrupt\./);
      await vs.waitStatus(/Forge: idle/);
      await vs.shot("chat-continue");
    });

    it("@forge /explain (a contributed command) and /greet (the workspace's, typed) run as commands", async () => {
      const prompts = () => {
        const dir = path.join(ws, ".forge", "transcripts");
        return fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8").split("## Prompt\n\n")[1] ?? "");
      };
      // The participant is sticky: after a turn the input holds "@forge " already; start from an empty input.
      await chat().locator(".interactive-input-editor .monaco-editor, .chat-input-container .monaco-editor").first().click();
      await vs.page.keyboard.press("Control+A");
      await vs.page.keyboard.press("Backspace");
      await ask("@forge /explain README.md");
      await responseText(/It is the readme\./);
      await vs.waitStatus(/Forge: idle/);
      await vs.shot("chat-explain");
      assert.ok(prompts().some((p) => p.startsWith("Explain README.md: what it does")), JSON.stringify(prompts()));
      await chat().locator(".interactive-input-editor .monaco-editor, .chat-input-container .monaco-editor").first().click();
      await vs.page.keyboard.press("Control+A");
      await vs.page.keyboard.press("Backspace");
      await ask("@forge /greet Ada");
      await responseText(/Bonjour, Ada\./);
      await vs.waitStatus(/Forge: idle/);
      await vs.shot("chat-greet");
      assert.ok(prompts().some((p) => p.startsWith("Say hello to Ada in French.")), JSON.stringify(prompts()));
    });
  });
  describe("agents (issue 27): Forge: Select Agent, the status bar, @forge /agent", () => {
    let vs;
    let tmp;
    let ws;
    const chat = () => vs.page.locator(".part.auxiliarybar");
    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-agents-"));
      ws = path.join(tmp, "project");
      fs.mkdirSync(ws);
      const script = path.join(tmp, "script.json");
      const write = { tool_calls: [{ name: "write", arguments: { file_path: "notes.md", content: "notes\n" } }] };
      fs.writeFileSync(script, JSON.stringify({ responses: [write, { text: "Sage cannot write." }] }));
      vs = new RealVSCode({ vsix, workspace: ws, name: "agents", settings: { "forge.pythonPath": python, "forge.model": `scripted/${script}` } });
      await vs.start();
    });
    after(async () => {
      await vs?.stop();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it("Forge: Select Agent lists the agents; sage picked, the status bar names it and its turn cannot write", async () => {
      await vs.waitStatus(/Forge: idle/);
      await vs.command("Forge: Select Agent");
      const rows = vs.page.locator(".quick-input-widget .monaco-list-row");
      // The palette's rows go once the agents' pick is up (its placeholder names the current agent).
      await vs.page.locator(".quick-input-widget input[placeholder*='now forge']").waitFor({ state: "visible" });
      await sleep(300);
      const labels = await rows.evaluateAll((els) => els.map((el) => el.querySelector(".label-name")?.textContent ?? ""));
      await vs.shot("select-agent-pick");
      assert.deepEqual(labels, ["forge", "muse", "sage"]);
      await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "sage" }).first().click();
      await vs.waitToast(/^Forge: agent sage for this conversation$/);
      await vs.clearNotifications();
      assert.equal((await vs.waitStatus(/Forge \(sage\): idle/)).trim(), "Forge (sage): idle");
      await vs.command("Forge: Run Agent");
      await vs.answerInput("write notes.md", "What should Forge do?");
      await vs.waitToast(/^Forge: turn completed \(2 requests, 1 tool call, 1 failure\)$/);
      await vs.shot("select-agent-turn");
      assert.ok(!fs.existsSync(path.join(ws, "notes.md")), "sage wrote a file");
      assert.match(vs.forgeLog(), /tool write is not available to agent sage/);
      await vs.waitStatus(/Forge \(sage\): idle/);
      await vs.clearNotifications();
    });

    it("@forge /agent muse chooses muse; the status bar follows; New Conversation is forge again", async () => {
      await vs.chatSend("@forge /agent muse");
      const end = Date.now() + 30_000;
      let text = "";
      while (Date.now() < end && !/Agent muse \(Muse\) for this conversation/.test(text)) {
        text = await chat().locator(".interactive-list").innerText().catch(() => "");
        await sleep(200);
      }
      await vs.shot("chat-agent-muse");
      assert.match(text, /Agent muse \(Muse\) for this conversation/);
      await vs.waitStatus(/Forge \(muse\): idle/);
      await vs.command("Forge: New Conversation");
      // (the last turn's usage stays after it: "Forge: idle · 612 tokens, cost unknown")
      const plain = await vs.waitStatus(/^\s*Forge: idle/);
      assert.match(plain.trim(), /^Forge: idle( ·|$)/);
    });
  });
});
