// Issue 26: the official TypeScript client passes mcpServers in session/new, as an editor would. The server
// (mcp-server-time from PyPI, stdio) is that session's only: its tool works there, another session has
// no such tool, and once the agent exits nothing it started is left. Run by .ci/test (npm test).
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { after, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";

const python = process.env.FORGE_PYTHON || "python3";
const home = fs.mkdtempSync(path.join(os.tmpdir(), "forge-acp-node-mcp-"));
const env = {
  ...process.env,
  XDG_CONFIG_HOME: path.join(home, "config"),
  XDG_STATE_HOME: path.join(home, "state"),
  LITELLM_LOCAL_MODEL_COST_MAP: "True",
  FORGE_LSP_WARMUP_DELAY: "off",
  // The scripted model served without litellm (its import is seconds of a core per agent): these tests are about the
  // client and the protocol; tests/agent_protocol/test_acp.py and the demo keep litellm's path.
  FORGE_LSP_SCRIPTED: process.env.FORGE_LSP_SCRIPTED || "direct",
};
after(() => fs.rmSync(home, { recursive: true, force: true }));

const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });

/** Processes whose working directory is dir or below it (the MCP servers started there). */
function processesIn(dir) {
  const found = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cwd = fs.readlinkSync(`/proc/${d}/cwd`);
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      if (!/\) Z /.test(stat) && (cwd === dir || cwd.startsWith(dir + "/"))) found.push(`${d}: ${fs.readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " ")}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

test("session/new mcpServers: the tool works in that session only; nothing is left after exit", { timeout: 90_000 }, async () => {
  const ws = path.join(home, "ws");
  fs.mkdirSync(ws);
  const responses = [
    call("mcp_time_get_current_time", { timezone: "UTC" }),
    { text: "It is noon." },
    call("mcp_time_get_current_time", { timezone: "UTC" }),
    { text: "No clock here." },
  ];
  fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses }));
  fs.writeFileSync(path.join(ws, ".forge.toml"), 'model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n');
  const trusted = spawnSync(python, ["-m", "forge_lsp", "trust", ws], { env, encoding: "utf8" });
  assert.equal(trusted.status, 0, trusted.stderr);

  const proc = spawn(python, ["-m", "forge_lsp", "acp"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const updates = {};
  const client = {
    async sessionUpdate(params) {
      (updates[params.sessionId] ??= []).push(params.update);
    },
    async requestPermission() {
      return { outcome: { outcome: "cancelled" } };
    },
  };
  const conn = new acp.ClientSideConnection(() => client, acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  try {
    await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const time = { name: "time", command: python, args: ["-m", "mcp_server_time", "--local-timezone", "UTC"], env: [] };
    const a = (await conn.newSession({ cwd: ws, mcpServers: [time] })).sessionId;
    const b = (await conn.newSession({ cwd: ws, mcpServers: [] })).sessionId;
    assert.equal((await conn.prompt({ sessionId: a, prompt: [{ type: "text", text: "what time is it?" }] })).stopReason, "end_turn");
    assert.ok(processesIn(ws).length > 0, "session a's MCP server is not running");
    assert.equal((await conn.prompt({ sessionId: b, prompt: [{ type: "text", text: "and here?" }] })).stopReason, "end_turn");

    const finals = (id) => updates[id].filter((u) => u.sessionUpdate === "tool_call_update" && ["completed", "failed"].includes(u.status));
    const [inA] = finals(a);
    assert.equal(inA.status, "completed", JSON.stringify(inA));
    assert.match(inA.content[0].content.text, /"timezone": "UTC"/);
    const [inB] = finals(b);
    assert.equal(inB.status, "failed", JSON.stringify(inB));
    assert.match(inB.content[0].content.text, /mcp_time_get_current_time/);
  } finally {
    proc.stdin.end();
    await new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on("exit", resolve)));
  }
  let left = processesIn(ws);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesIn(ws);
  }
  assert.deepEqual(left, [], stderr);
});
