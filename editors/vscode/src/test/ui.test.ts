// What a VS Code user sees of an interrupt, end to end: the real server through vscode-jsonrpc, its
// messages shown the way vscode-languageclient shows them (window/showMessage and
// window/showMessageRequest as notifications, window/logMessage as output-channel lines) plus the
// extension's own notices (turnNotice on forge/event).
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ForgeEvent, turnNotice } from "../events";
import { DIRECT, serverEnv } from "./env";

interface Shown {
  message: string;
  actions: string[];
}

async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) {
      throw new Error("condition not met in time");
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("an interrupt is one notification with Continue; the Continue turn's result is told; one output line per event", { timeout: 120_000 }, async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-ui-"));
  fs.writeFileSync(path.join(ws, ".forge.toml"), 'model = "scripted/script.json"\n[retry]\nmin_delay_ms = 10\n');
  const fail = { text: "Let me try the command.", tool_calls: [{ name: "shell", arguments: { command: "exit 1" } }] };
  fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses: [fail, fail, fail, { text: "Recovered after the interrupt." }] }));
  const proc = spawn(process.env.FORGE_PYTHON || "python3", ["-m", "forge_lsp"], {
    env: serverEnv(DIRECT),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const shown: Shown[] = [];
  const output: string[] = [];
  conn.onRequest("workspace/configuration", (p: { items: unknown[] }) => p.items.map(() => null));
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("client/registerCapability", () => null);
  conn.onRequest("window/showMessageRequest", (p: { message: string; actions?: { title: string }[] }) => {
    const actions = (p.actions ?? []).map((a) => a.title);
    shown.push({ message: p.message, actions });
    return actions.includes("Continue") ? { title: "Continue" } : null; // the user presses Continue
  });
  conn.onNotification("window/showMessage", (p: { message: string }) => shown.push({ message: p.message, actions: [] }));
  conn.onNotification("window/logMessage", (p: { message: string }) => output.push(...p.message.split("\n")));
  conn.onNotification("forge/event", (e: ForgeEvent) => {
    const notice = turnNotice(e);
    if (notice) {
      shown.push({ message: notice.message, actions: [] });
    }
  });
  conn.listen();
  try {
    const root = pathToFileURL(ws).toString();
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "ws" }],
      capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true } },
      // A workspace the user trusts in VS Code (workspace.isTrusted), so its scripted model applies.
      initializationOptions: { settings: {}, workspaceTrusted: true },
    });
    await conn.sendNotification("initialized", {});
    const result = (await conn.sendRequest("workspace/executeCommand", { command: "forge.run", arguments: [{ prompt: "go" }] })) as {
      status: string;
    };
    assert.equal(result.status, "interrupted");
    await until(() => output.some((l) => l.startsWith("■ turn completed")));
    await new Promise((r) => setTimeout(r, 200)); // anything late would come now

    assert.equal(shown.length, 2, JSON.stringify(shown));
    assert.match(shown[0].message, /Maximum tool failure limit \(3\) reached/);
    assert.deepEqual(shown[0].actions, ["Continue"]);
    assert.equal(shown[1].message, "Forge: turn completed (1 request, 0 tool calls, 0 failures)");

    const count = (prefix: string) => output.filter((l) => l.startsWith(prefix)).length;
    assert.equal(count("■ turn interrupted"), 1, output.join("\n"));
    assert.equal(count("■ turn completed"), 1, output.join("\n"));
    assert.equal(count("  assistant: Let me try the command."), 3, output.join("\n"));
    assert.equal(count("  assistant: Recovered after the interrupt."), 1, output.join("\n"));
    assert.equal(output.filter((l) => /assistant: \S+ ?$/.test(l) && !l.includes(".")).length, 0, output.join("\n"));
    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    proc.kill();
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
