// Issue 26 in real VS Code (code-server, Chromium): forge.mcpServers in the user's settings reaches the
// server, and "Forge: MCP Servers" lists each server's state and tools; picking one offers Restart.
// The servers: mcp-server-time (PyPI) and one that exits at once.
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

describe("real VS Code: Forge: MCP Servers", { skip, timeout: 300_000 }, () => {
  let vs;
  let tmp;
  before(async () => {
    assert.ok(fs.existsSync(vsix), `no ${vsix}: run npm run package first`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-real-mcp-"));
    const ws = path.join(tmp, "project");
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "README.md"), "# project\n");
    vs = new RealVSCode({
      vsix,
      workspace: ws,
      name: "mcp",
      settings: {
        "forge.pythonPath": python,
        "forge.mcpServers": {
          time: { command: python, args: ["-m", "mcp_server_time", "--local-timezone", "UTC"] },
          broken: { command: python, args: ["-c", "import sys; sys.exit(3)"] },
        },
      },
    });
    await vs.start();
    await vs.waitStatus(/Forge: idle/);
  });
  after(async () => {
    await vs?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The rows of the quick pick on screen: [{label, description, detail}]. */
  async function rows() {
    const list = vs.page.locator(".quick-input-widget .monaco-list-row");
    await list.first().waitFor({ state: "visible" });
    await sleep(300);
    return list.evaluateAll((els) =>
      els.map((el) => ({
        label: (el.querySelector(".label-name")?.textContent ?? "").trim(),
        description: el.querySelector(".label-description")?.textContent ?? "",
        text: el.textContent ?? "",
      })),
    );
  }

  it("lists each server's state and tools; picking one offers Restart, which restarts it", async () => {
    // The servers start concurrently when the list is first asked for: ask until both have settled.
    let listed = [];
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      await vs.command("Forge: MCP Servers");
      listed = await rows();
      const by = Object.fromEntries(listed.map((r) => [r.label, r.description]));
      if (/^ready/.test(by.time ?? "") && /^failed/.test(by.broken ?? "")) break;
      await vs.page.keyboard.press("Escape");
      await sleep(500);
    }
    await vs.shot("mcp-servers");
    console.log(`# Forge: MCP Servers:\n${listed.map((r) => `${r.label} | ${r.description} | ${r.text}`).join("\n")}`);
    const by = Object.fromEntries(listed.map((r) => [r.label, r]));
    assert.equal(by.time?.description, "ready (2 tools)", JSON.stringify(listed));
    assert.match(by.time.text, /settings \(forge\.mcpServers\) · mcp_time_get_current_time, mcp_time_convert_time/, JSON.stringify(listed));
    assert.match(by.broken?.description ?? "", /^failed: /, JSON.stringify(listed));

    await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "time" }).first().click();
    const actions = await rows();
    await vs.shot("mcp-server-actions");
    assert.deepEqual(
      actions.map((r) => r.label),
      ["Restart time", "mcp_time_get_current_time", "mcp_time_convert_time"],
      JSON.stringify(actions),
    );
    await vs.page.locator(".quick-input-widget .monaco-list-row", { hasText: "Restart time" }).first().click();
    await vs.waitToast(/^Forge: MCP server time restarted: ready \(2 tools\)$/, 60_000);
    await vs.shot("mcp-restarted");
  });
});
