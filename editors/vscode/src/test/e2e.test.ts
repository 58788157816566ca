// End to end: vscode-jsonrpc (the protocol library VS Code itself uses) drives the real forge-lsp server
// with the extension's own initialization options and settings.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { ForgeEvent, statusText } from "../events";
import { ForgeSettings, initializationOptions, serverSettings } from "../settings";
import { serverEnv } from "./env";

interface Diagnostic {
  severity: number;
  code: string;
  source: string;
  message: string;
}

test("a turn through the real server with the extension's settings", { timeout: 120_000 }, async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-"));
  fs.writeFileSync(path.join(ws, ".forge.toml"), 'model = "scripted/script.json"\n[retry]\nmin_delay_ms = 10\n');
  const fail = { tool_calls: [{ name: "shell", arguments: { command: "exit 1" } }] };
  fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses: [fail, fail, fail] }));

  // What a user would have in settings.json; maxToolFailurePerTurn must reach the server.
  const settings: ForgeSettings = { serverPath: "", pythonPath: "python3", maxToolFailurePerTurn: 2, model: null };
  const python = process.env.FORGE_PYTHON || "python3";
  const proc = spawn(python, ["-m", "forge_lsp"], {
    env: serverEnv(),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const events: ForgeEvent[] = [];
  const progress: string[] = [];
  const diagnostics = new Map<string, Diagnostic[]>();
  const configRequests: unknown[] = [];
  conn.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) => {
    configRequests.push(params);
    return params.items.map((item) => (item.section === "forge" ? serverSettings(settings) : null));
  });
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("client/registerCapability", () => null);
  conn.onRequest("window/showMessageRequest", () => null);
  conn.onNotification("$/progress", (p: { value: { kind: string; message?: string } }) => progress.push(`${p.value.kind}:${p.value.message ?? ""}`));
  conn.onNotification("forge/event", (e: ForgeEvent) => events.push(e));
  conn.onNotification("textDocument/publishDiagnostics", (p: { uri: string; diagnostics: Diagnostic[] }) => diagnostics.set(p.uri, p.diagnostics));
  conn.onNotification("window/logMessage", () => undefined);
  conn.onNotification("window/showMessage", () => undefined);
  conn.listen();
  try {
    const root = pathToFileURL(ws).toString();
    const init = (await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "ws" }],
      capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true } },
      // As VS Code sends it for a folder the user trusts (workspace.isTrusted).
      initializationOptions: initializationOptions(settings, true),
    })) as { capabilities: { executeCommandProvider: { commands: string[] } } };
    assert.deepEqual(init.capabilities.executeCommandProvider.commands.sort(), [
      "forge.cancel", "forge.compact", "forge.deleteConversation", "forge.listAgents", "forge.listCommands",
      "forge.listConversations", "forge.mcpServers", "forge.newConversation", "forge.openConversation",
      "forge.restartMcpServer", "forge.run", "forge.setAgent", "forge.showConfig", "forge.status", "forge.trust",
      "forge.undoTurn",
    ]);
    // vscode-languageclient registers each of these as a VS Code command; one the extension registers
    // too makes the client's start fail ("command ... already exists") and no server ever runs.
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
    const own = (manifest.contributes.commands as { command: string }[]).map((c) => c.command);
    assert.deepEqual(own.filter((c) => init.capabilities.executeCommandProvider.commands.includes(c)), []);
    await conn.sendNotification("initialized", {});

    const result = (await conn.sendRequest("workspace/executeCommand", {
      command: "forge.run",
      arguments: [{ prompt: "break it" }],
    })) as { status: string; reason: { kind: string; limit: number; errors: Record<string, number> } };
    assert.equal(result.status, "interrupted");
    assert.deepEqual(result.reason, { kind: "MaxToolFailurePerTurnLimitReached", limit: 2, errors: { shell: 2 } });
    assert.ok(configRequests.length >= 1);

    const retries = events.filter((e) => e.type === "retry").map((e) => e.attemptsLeft);
    assert.deepEqual(retries, [1, 0]);
    let bar = "$(check) Forge: idle";
    for (const e of events) {
      bar = statusText(bar, e);
    }
    assert.match(bar, /^\$\(error\) Forge: interrupted · \d+ tokens, cost unknown$/);
    assert.ok(progress.includes("report:retry 1/2 shell"), progress.join(" | "));
    assert.equal(progress[progress.length - 1], "end:interrupted");

    const all = [...diagnostics.values()].flat();
    assert.equal(all.filter((d) => d.code === "tool-retry" && d.severity === 2 && d.source === "forge").length, 2);
    assert.equal(all.filter((d) => d.code === "max-tool-failure-per-turn" && d.severity === 1).length, 1);

    const config = (await conn.sendRequest("workspace/executeCommand", {
      command: "forge.showConfig",
      arguments: [{}],
    })) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(config["max_tool_failure_per_turn"], { value: 2, source: "editor" });
    assert.deepEqual(config["model"], { value: "scripted/script.json", source: "workspace" });

    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    proc.kill();
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
