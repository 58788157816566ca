// Real VS Code for the tests: code-server (VS Code 1.139 in the browser) from the install cache,
// driven by Debian's Chromium through playwright-core. Everything it writes (user data, extensions,
// the forge-lsp user config and trust state) is in one temporary folder per session.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const extensionDir = path.resolve(here, "..");
export const repoRoot = path.resolve(extensionDir, "..", "..");
export const cacheDir =
  process.env.FORGE_VSCODE_REAL_CACHE ||
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "forge-lsp", "vscode-real");
export const artifactsDir = process.env.FORGE_VSCODE_REAL_ARTIFACTS || path.join(here, "artifacts");
const codeServerBin = path.join(cacheDir, "node_modules", ".bin", "code-server");
const chromiumBin = process.env.FORGE_CHROMIUM || "/usr/bin/chromium";

/** Why the real VS Code tests cannot run here, or undefined when they can. */
export function missing() {
  const installed = fs.existsSync(cacheDir) && fs.readdirSync(cacheDir).some((f) => f.startsWith(".installed-code-server-"));
  if (!installed) {
    return `code-server is not installed in ${cacheDir} (editors/vscode/test-real/install.sh installs it, 2-20 min the first time)`;
  }
  if (!fs.existsSync(chromiumBin)) {
    return `no Chromium at ${chromiumBin} (apt-get install chromium)`;
  }
  return undefined;
}

export function playwright() {
  return createRequire(path.join(cacheDir, "package.json"))("playwright-core");
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The servers' cache folder (compiled templates, parsed grammars) shared by the sessions of one run of
 * scripts/guarded-test.mjs, whose os.tmpdir() is a folder of the run's own, removed after it: the first session
 * compiles them (a user's first start), the others find them made (a user's next window). Elsewhere none. */
function runCache() {
  const tmp = os.tmpdir();
  return path.basename(tmp).startsWith("forge-vscode-test-run-") ? path.join(tmp, "forge-lsp-cache") : undefined;
}

/**
 * One code-server with its own user data and extensions, the .vsix installed, and a browser page on
 * `workspace`. `settings` go in the user's settings.json (trusted, like a user's own).
 */
export class RealVSCode {
  constructor({ vsix, workspace, settings, trust = false, name = "session", env = {} }) {
    this.vsix = vsix;
    this.workspace = workspace;
    this.settings = settings;
    this.trust = trust;
    this.name = name;
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-"));
    this.userData = path.join(this.home, "user-data");
    this.extensions = path.join(this.home, "extensions");
    this.shots = path.join(artifactsDir, name);
    this.step = 0;
    this.serverLog = [];
    fs.rmSync(this.shots, { recursive: true, force: true });
    fs.mkdirSync(this.shots, { recursive: true });
    const n24 = path.join(cacheDir, "n24");
    this.env = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(this.home, "config"),
      XDG_STATE_HOME: path.join(this.home, "state"),
      XDG_CACHE_HOME: runCache() ?? path.join(this.home, "cache"), // the server's compiled templates: not the user's
      XDG_DATA_HOME: path.join(this.home, "data"),
      LITELLM_LOCAL_MODEL_COST_MAP: "True",
      // The scripted model served without litellm (seconds of a core per server, for the import): the sessions
      // about the model path itself ask for litellm's path (env: { FORGE_LSP_SCRIPTED: "litellm" }), as a user's runs;
      // FORGE_LSP_SCRIPTED=litellm in the run's environment puts them all there.
      FORGE_LSP_SCRIPTED: process.env.FORGE_LSP_SCRIPTED || "direct",
      ...env,
    };
    // code-server's own node first, whatever PATH env gives (a PATH without the tests' virtual environment).
    this.env.PATH = `${n24}:${this.env.PATH}`;
  }

  writeSettings(extra = {}) {
    const user = path.join(this.userData, "User");
    fs.mkdirSync(user, { recursive: true });
    const settings = {
      "security.workspace.trust.enabled": this.trust,
      "security.workspace.trust.startupPrompt": "always",
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.welcomePage.walkthroughs.openOnInstall": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "window.restoreWindows": "none",
      ...this.settings,
      ...extra,
    };
    this.settings = { ...this.settings, ...extra };
    fs.writeFileSync(path.join(user, "settings.json"), JSON.stringify(settings, null, 2));
    // forge.serverPath and forge.pythonPath are machine-overridable: a window code-server takes for a remote
    // one ignores them in the User settings ("cannot be applied in this window"; seen on a loaded machine,
    // where the server then never started), so they go in its Machine settings too.
    const machine = Object.fromEntries(Object.entries(settings).filter(([key]) => ["forge.serverPath", "forge.pythonPath"].includes(key)));
    fs.mkdirSync(path.join(this.userData, "Machine"), { recursive: true });
    fs.writeFileSync(path.join(this.userData, "Machine", "settings.json"), JSON.stringify(machine, null, 2));
  }

  async start() {
    this.writeSettings();
    const install = spawnSync(
      codeServerBin,
      ["--user-data-dir", this.userData, "--extensions-dir", this.extensions, "--install-extension", this.vsix],
      { env: this.env, encoding: "utf8", timeout: 120_000 },
    );
    if (install.status !== 0 || !/successfully installed/i.test(install.stdout)) {
      throw new Error(`--install-extension failed (${install.status}): ${install.stdout}\n${install.stderr}`);
    }
    this.installOutput = install.stdout.trim();
    this.port = await freePort();
    const args = [
      "--bind-addr", `127.0.0.1:${this.port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
      "--user-data-dir", this.userData, "--extensions-dir", this.extensions,
    ];
    this.proc = spawn(codeServerBin, args, { env: this.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const onData = (d) => this.serverLog.push(d.toString());
    this.proc.stdout.on("data", onData);
    this.proc.stderr.on("data", onData);
    const end = Date.now() + 60_000;
    while (!this.serverLog.join("").includes("HTTP server listening")) {
      if (this.proc.exitCode !== null || Date.now() > end) {
        throw new Error(`code-server did not start:\n${this.serverLog.join("")}`);
      }
      await sleep(100);
    }
    const { chromium } = playwright();
    this.browser = await chromium.launch({ executablePath: chromiumBin, args: ["--no-sandbox", "--disable-gpu"] });
    this.page = await this.browser.newPage({ viewport: { width: 1400, height: 900 } });
    this.page.setDefaultTimeout(30_000);
    await this.page.goto(`http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(this.workspace)}`);
    await this.page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
    await this.page.waitForSelector(".statusbar", { timeout: 60_000 });
  }

  async stop() {
    await this.browser?.close().catch(() => undefined);
    if (this.proc && this.proc.exitCode === null) {
      try {
        process.kill(-this.proc.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const end = Date.now() + 10_000;
      while (this.proc.exitCode === null && Date.now() < end) {
        await sleep(100);
      }
      if (this.proc.exitCode === null) {
        try {
          process.kill(-this.proc.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    this.keepLogs();
    fs.rmSync(this.home, { recursive: true, force: true });
  }

  /** The extension's output channels (the Forge log has the server's stderr) kept beside the screenshots. */
  keepLogs() {
    const logs = path.join(this.userData, "logs");
    if (!fs.existsSync(logs)) return;
    for (const entry of fs.readdirSync(logs, { recursive: true })) {
      const name = path.basename(String(entry));
      if (String(entry).includes("output_logging_") && name.endsWith("Forge.log")) {
        fs.copyFileSync(path.join(logs, String(entry)), path.join(this.shots, `output-${name}`));
      }
    }
  }

  /** The Forge output channel as VS Code has written it so far (the client's log and Show Config). */
  forgeLog() {
    const logs = path.join(this.userData, "logs");
    if (!fs.existsSync(logs)) return "";
    return fs
      .readdirSync(logs, { recursive: true })
      .map(String)
      .filter((e) => e.includes("output_logging_") && path.basename(e).endsWith("Forge.log"))
      .map((e) => fs.readFileSync(path.join(logs, e), "utf8"))
      .join("\n");
  }

  /** A screenshot of the current step, kept under artifacts/<session>/NN-<label>.png. */
  async shot(label) {
    this.step += 1;
    const file = path.join(this.shots, `${String(this.step).padStart(2, "0")}-${label}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** Runs a command from the palette (F1), by its title as the palette lists it. */
  async command(title) {
    // The palette again when the title is not listed soon: a quick pick still closing (one of ours, just
    // dismissed) can take the typed text, and the palette then never lists the command.
    for (let attempt = 1; ; attempt += 1) {
      await this.page.keyboard.press("Escape");
      await this.page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 }, force: true }).catch(() => undefined);
      try {
        await this.palette(title, attempt < 3 ? 10_000 : 30_000);
        return;
      } catch (error) {
        if (attempt >= 3) {
          throw error;
        }
      }
    }
  }

  /** The palette (F1) from where the focus is, `title` typed, and its row (that label, exactly) clicked. */
  async palette(title, timeout = 30_000) {
    const page = this.page;
    const input = page.locator(".quick-input-widget .quick-input-box input");
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible" });
    await input.fill(`>${title}`);
    // Not Enter, which runs the focused row: for a moment after the typing, that can be a row of the list
    // before the filter (a recently used command), or a longer title that ranks first.
    const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
    const row = page.locator(".quick-input-widget .monaco-list-row").filter({ has: page.locator(".label-name", { hasText: exact }) });
    await row.first().click({ timeout });
  }

  /** Answers an input box (vscode.window.showInputBox) with `text`. */
  async answerInput(text, promptText) {
    const page = this.page;
    const widget = page.locator(".quick-input-widget", { hasText: promptText });
    await widget.waitFor({ state: "visible" });
    const input = page.locator(".quick-input-widget .quick-input-box input");
    await input.fill(text);
    await page.keyboard.press("Enter");
  }

  /**
   * Types `text` into the Chat view's input and sends it (Enter), as a user does; returns once it was sent: the
   * input no longer holds its last word (the participant may stay: "@forge "). A completion list still open when
   * Enter comes (the participant's commands, a word's) takes the Enter instead of sending: it is closed first,
   * and Enter pressed again while the text stays unsent.
   */
  async chatSend(text) {
    const page = this.page;
    const input = page.locator(".part.auxiliarybar").locator(".interactive-input-editor .monaco-editor, .chat-input-container .monaco-editor").first();
    const typed = async () => (await input.locator(".view-lines").innerText().catch(() => "")).replace(/\u00a0/g, " ");
    const last = text.trim().split(/\s+/).pop();
    await input.click();
    await page.keyboard.type(text);
    const suggest = page.locator(".suggest-widget.visible");
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if ((await suggest.count()) > 0) {
        await page.keyboard.press("Escape");
      }
      await page.keyboard.press("Enter");
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        if (!(await typed()).includes(last)) {
          return;
        }
        await sleep(200);
      }
    }
    throw new Error(`the Chat view did not send ${JSON.stringify(text)}: its input holds ${JSON.stringify(await typed())}`);
  }

  /** The status bar items' texts. */
  async statusBar() {
    return this.page.locator(".statusbar .statusbar-item").allInnerTexts();
  }

  async waitStatus(re, timeout = 60_000) {
    const end = Date.now() + timeout;
    let last = [];
    while (Date.now() < end) {
      last = await this.statusBar();
      const hit = last.find((t) => re.test(t));
      if (hit) {
        return hit;
      }
      await sleep(200);
    }
    throw new Error(`no status bar item matches ${re}: ${JSON.stringify(last)}`);
  }

  /** The notifications on screen (toasts, and the notification center while it is open): [{text, buttons}]. */
  async toasts() {
    return this.page.locator(".notifications-toasts .notification-toast, .notifications-center.visible .notification-list-item").evaluateAll((els) =>
      els.map((el) => ({
        text: el.querySelector(".notification-list-item-message")?.textContent ?? "",
        source: el.querySelector(".notification-list-item-source")?.textContent ?? "",
        buttons: [...el.querySelectorAll(".notification-list-item-buttons-container .monaco-button")].map((b) => b.textContent ?? ""),
        progress: !!el.querySelector(".monaco-progress-container.active, .monaco-progress-container.infinite"),
      })),
    );
  }

  /** Waits for a toast whose message matches `re`; returns it. */
  async waitToast(re, timeout = 60_000) {
    const end = Date.now() + timeout;
    let last = [];
    while (Date.now() < end) {
      last = await this.toasts();
      const hit = last.find((t) => re.test(t.text));
      if (hit) {
        return hit;
      }
      await sleep(100);
    }
    // What was on screen instead (artifacts/<session>/), and what the notification center holds.
    await this.shot("no-such-notification").catch(() => undefined);
    const center = await this.page
      .locator(".notifications-center .notification-list-item-message")
      .allTextContents()
      .catch(() => []);
    throw new Error(`no notification matches ${re}: ${JSON.stringify(last)}; in the notification center: ${JSON.stringify(center)}`);
  }

  /**
   * Presses the button `title` on the notification whose message matches `re`: on its toast, or, when
   * the toast has timed out (as toasts do), in the notification center, where it stays.
   */
  async pressNotificationButton(re, title) {
    const page = this.page;
    const inToasts = page.locator(".notifications-toasts .notification-toast").filter({
      has: page.locator(".notification-list-item-message", { hasText: re }),
    });
    let item = inToasts.first();
    if ((await inToasts.count()) === 0) {
      await this.command("Notifications: Show Notifications");
      item = page
        .locator(".notifications-center .notification-list-item")
        .filter({ has: page.locator(".notification-list-item-message", { hasText: re }) })
        .first();
      await item.waitFor({ state: "visible" });
    }
    await item.hover();
    await item.locator(".notification-list-item-buttons-container .monaco-button", { hasText: title }).first().click();
  }

  async clearNotifications() {
    await this.command("Notifications: Clear All Notifications");
  }

  /** The Problems panel's markers: [{severity, text}] (the panel is opened and expanded). */
  async problems() {
    await this.command("View: Focus Problems (Errors, Warnings, Infos)");
    const page = this.page;
    await page.locator(".markers-panel").waitFor({ state: "visible" });
    await sleep(300);
    return page.locator(".markers-panel .monaco-list-row").evaluateAll((rows) =>
      rows
        .filter((r) => r.querySelector(".marker-message-details, .marker-icon"))
        .map((r) => {
          // The row's aria-label starts with the severity ("Error: ...", "Warning: ...").
          const label = r.getAttribute("aria-label") ?? "";
          const severity = (/^(Error|Warning|Info)/.exec(label)?.[1] ?? "none").toLowerCase();
          return { severity, text: r.textContent ?? "", label };
        }),
    );
  }

  async waitProblems(pred, timeout = 30_000) {
    const end = Date.now() + timeout;
    let last = [];
    while (Date.now() < end) {
      last = await this.problems();
      if (pred(last)) {
        return last;
      }
      await sleep(500);
    }
    throw new Error(`Problems panel not as expected: ${JSON.stringify(last, null, 1)}`);
  }

  /** Closes every editor. */
  async closeEditors() {
    await this.command("View: Close All Editors");
  }

  /**
   * The extension's activation time (ms) as VS Code measured it, read from the Running Extensions
   * editor (Developer: Show Running Extensions), where each row names the extension and its time.
   */
  async activationTime(displayName) {
    await this.command("Developer: Show Running Extensions");
    const row = this.page.locator(".runtime-extensions-editor .monaco-list-row", { hasText: displayName }).first();
    await row.waitFor({ state: "visible" });
    const end = Date.now() + 20_000;
    let text = "";
    while (Date.now() < end) {
      text = (await row.innerText()).replace(/\s+/g, " ");
      const m = /(\d+)\s*ms/.exec(text);
      if (m) {
        return Number(m[1]);
      }
      await sleep(200);
    }
    throw new Error(`no activation time in the Running Extensions row: ${text}`);
  }

  /** Sets a user setting in the Settings editor (search for it, type the value), as a user does. */
  async setSetting(id, value) {
    await this.command("Preferences: Open User Settings");
    const page = this.page;
    const search = page.locator(".settings-editor .settings-header .suggest-input-container");
    await search.waitFor({ state: "visible" });
    await search.click();
    await page.keyboard.type(id);
    const item = page.locator(`.settings-editor .setting-item-contents[data-key="${id}"], .settings-editor .setting-item[data-key="${id}"]`).first();
    await item.waitFor({ state: "visible" });
    const input = item.locator("input").first();
    await input.fill(String(value));
    await input.press("Enter");
    await sleep(1500); // the Settings editor writes settings.json after a short debounce
    const written = JSON.parse(fs.readFileSync(path.join(this.userData, "User", "settings.json"), "utf8"));
    if (written[id] !== value) {
      throw new Error(`settings.json has ${id} = ${JSON.stringify(written[id])}, not ${JSON.stringify(value)}`);
    }
  }
}
