// An independent ACP client: the official TypeScript SDK (ClientSideConnection) drives `forge-lsp acp`
// in a subprocess, as Zed or a JetBrains IDE would. Run by .ci/test (FORGE_PYTHON names the interpreter).
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { after, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";

const python = process.env.FORGE_PYTHON || "python3";
const home = fs.mkdtempSync(path.join(os.tmpdir(), "forge-acp-node-"));
// The user's own config and trust store: the test's, never the machine user's.
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

const shell = (command) => ({ tool_calls: [{ name: "shell", arguments: { command } }] });

function workspace(name, responses, toml = "") {
  const ws = path.join(home, name);
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses }));
  fs.writeFileSync(path.join(ws, ".forge.toml"), `model = "scripted/script.json"\n${toml}\n[retry]\nmin_delay_ms = 1\n`);
  // Trusted the way a user does it, so the workspace's scripted model applies.
  const p = spawnSync(python, ["-m", "forge_lsp", "trust", ws], { env, encoding: "utf8" });
  assert.equal(p.status, 0, p.stderr);
  return ws;
}

function start(answer = "reject_once") {
  const proc = spawn(python, ["-m", "forge_lsp", "acp"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const seen = { updates: [], permissions: [] };
  const client = {
    async sessionUpdate(params) {
      seen.updates.push(params.update);
    },
    async requestPermission(params) {
      seen.permissions.push(params);
      return { outcome: { outcome: "selected", optionId: answer } };
    },
    async readTextFile() {
      throw new Error("not offered");
    },
    async writeTextFile() {
      throw new Error("not offered");
    },
  };
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = new acp.ClientSideConnection(() => client, stream);
  const stop = async () => {
    proc.stdin.end();
    await new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on("exit", resolve)));
  };
  return { conn, proc, seen, stop, stderr: () => stderr };
}

async function session(conn, ws) {
  const init = await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: {} } });
  assert.equal(init.agentCapabilities.loadSession, true);
  return (await conn.newSession({ cwd: ws, mcpServers: [] })).sessionId;
}

const text = (seen) =>
  seen.updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");

test("a turn with retries, then the failure limit interrupts it", async () => {
  const ws = workspace("retries", [{ text: "Trying.", ...shell("exit 1") }, shell("exit 1"), shell("exit 1")]);
  const a = start();
  try {
    const id = await session(a.conn, ws);
    const result = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "fix it" }] });
    assert.equal(result.stopReason, "end_turn");
    assert.equal(result._meta.kind, "MaxToolFailurePerTurnLimitReached");
    assert.deepEqual(result._meta.errors, { shell: 3 });
    const calls = a.seen.updates.filter((u) => u.sessionUpdate === "tool_call");
    assert.deepEqual(calls.map((c) => c.kind), ["execute", "execute", "execute"]);
    const notices = a.seen.updates
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed" && u.content?.length === 2)
      .map((u) => u.content[1].content.text);
    assert.match(notices[0], /Attempts remaining:\*\* 2/);
    assert.match(notices[1], /Attempts remaining:\*\* 1/);
    // One final update per failed call, the error and its notice together; the counts in _meta, not rawOutput.
    const finals = a.seen.updates.filter((u) => u.sessionUpdate === "tool_call_update" && ["completed", "failed"].includes(u.status));
    assert.deepEqual(finals.map((u) => u.toolCallId), calls.map((c) => c.toolCallId));
    assert.deepEqual(finals.map((u) => u._meta), [2, 1, 0].map((n) => ({ attemptsLeft: n, limit: 3 })));
    assert.ok(finals.every((u) => u.rawOutput === undefined));
    assert.match(text(a.seen), /Trying\.[\s\S]*Interrupted: Maximum tool failure limit \(3\)/);
  } finally {
    await a.stop();
  }
});

test("a trusted workspace's hooks: pre_tool exit 2 blocks a call, post_tool stdout is added, stop exit 2 goes on once", async () => {
  const hooks =
    '[[hooks]]\nevent = "pre_tool"\nmatcher = "write"\ncommand = "echo \'no writes under generated/\' >&2; exit 2"\n\n' +
    '[[hooks]]\nevent = "post_tool"\nmatcher = "shell"\ncommand = "echo checked by the post_tool hook"\n\n' +
    '[[hooks]]\nevent = "stop"\ncommand = "test -e stopped && exit 0; touch stopped; echo \'run the tests first\' >&2; exit 2"\n';
  const ws = workspace(
    "hooks",
    [
      { tool_calls: [{ name: "write", arguments: { file_path: "generated/a.py", content: "x = 1\n" } }] },
      shell("echo hi"),
      { text: "Done." },
      { text: "Tests pass." },
    ],
    hooks,
  );
  const a = start();
  try {
    const id = await session(a.conn, ws);
    const result = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "go" }] });
    assert.equal(result.stopReason, "end_turn");
    assert.deepEqual([result._meta.forge.toolCalls, result._meta.forge.failures, result._meta.forge.requests], [2, 1, 4]);
    assert.ok(!fs.existsSync(path.join(ws, "generated", "a.py")));
    const finals = a.seen.updates.filter((u) => u.sessionUpdate === "tool_call_update" && ["completed", "failed"].includes(u.status));
    assert.deepEqual(finals.map((u) => u.status), ["failed", "completed"]);
    // The hook's stderr, then whose refusal it is.
    assert.match(finals[0].content[0].content.text, /<cause>no writes under generated\/\n\(the pre_tool hook `[^`]+` refused this call\)<\/cause>/);
    assert.match(finals[0].content[1].content.text, /Attempts remaining:\*\* 2/);
    assert.match(finals[1].content[0].content.text, /post_tool hook `echo checked by the post_tool hook`: checked by the post_tool hook/);
    assert.match(text(a.seen), /Done\.[\s\S]*did not let the turn end: run the tests first[\s\S]*Tests pass\./);
  } finally {
    await a.stop();
  }
});

test("a confirm rule asks for permission; Deny refuses the command", async () => {
  const ws = workspace("permission", [shell("echo deploy > deployed"), { text: "ok" }], '[tools.shell]\nconfirm = ["echo deploy*"]');
  const a = start("reject_once");
  try {
    const id = await session(a.conn, ws);
    const result = await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "deploy" }] });
    assert.equal(result.stopReason, "end_turn");
    assert.equal(a.seen.permissions.length, 1);
    assert.deepEqual(a.seen.permissions[0].options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
    assert.ok(!fs.existsSync(path.join(ws, "deployed")));
  } finally {
    await a.stop();
  }
});

test("session/cancel ends the prompt as cancelled and kills the running command", async () => {
  const marker = path.join(home, "sleep.pid");
  const ws = workspace("cancel", [shell(`echo $$ > ${marker}; exec sleep 30`)]);
  const a = start();
  try {
    const id = await session(a.conn, ws);
    const turn = a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "wait" }] });
    for (let i = 0; i < 600 && !(fs.existsSync(marker) && fs.readFileSync(marker, "utf8").trim()); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const pid = Number(fs.readFileSync(marker, "utf8"));
    await a.conn.cancel({ sessionId: id });
    const result = await turn;
    assert.equal(result.stopReason, "cancelled");
    await new Promise((r) => setTimeout(r, 300));
    const status = fs.existsSync(`/proc/${pid}/status`) ? fs.readFileSync(`/proc/${pid}/status`, "utf8") : "";
    assert.ok(status === "" || status.includes("State:\tZ"), `sleep ${pid} still runs`);
  } finally {
    await a.stop();
  }
});

test("session/load after a restart replays the conversation and continues it", async () => {
  const ws = workspace("load", [shell("echo first-result"), { text: "first done" }]);
  const a = start();
  let id;
  try {
    id = await session(a.conn, ws);
    await a.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "first prompt" }] });
  } finally {
    await a.stop();
  }
  workspace("load", [{ text: "second done" }]); // a new process reads its script from the start
  const b = start();
  try {
    await b.conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: {} } });
    await b.conn.loadSession({ sessionId: id, cwd: ws, mcpServers: [] });
    const kinds = b.seen.updates.map((u) => u.sessionUpdate);
    assert.equal(kinds[0], "user_message_chunk");
    assert.ok(kinds.includes("tool_call") && kinds.includes("tool_call_update"), kinds.join(","));
    const result = await b.conn.prompt({ sessionId: id, prompt: [{ type: "text", text: "second prompt" }] });
    assert.equal(result.stopReason, "end_turn");
    assert.match(text(b.seen), /first done[\s\S]*second done/);
  } finally {
    await b.stop();
  }
});
