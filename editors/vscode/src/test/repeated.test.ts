// The repeated-call stop through the real server with the extension's settings: forge.maxRepeatedCallsPerTurn
// reaches the server, the interrupt is an Error of its own code, and Continue (the notification's button) goes on.
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
import { DIRECT, serverEnv } from "./env";

interface Diagnostic {
  severity: number;
  code: string;
  source: string;
  message: string;
}

test("a model repeating one write is stopped at forge.maxRepeatedCallsPerTurn, and Continue goes on", { timeout: 120_000 }, async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-repeat-"));
  fs.writeFileSync(path.join(ws, ".forge.toml"), 'model = "scripted/script.json"\n[retry]\nmin_delay_ms = 10\n');
  // One write as a model may format it: spacing and key order differ, the call does not.
  const write = (args: string) => ({ tool_calls: [{ name: "write", arguments: args }] });
  const responses = [
    write('{"file_path": "notes.md", "content": "# Notes\\n", "overwrite": true}'),
    write('{ "overwrite" : true, "content" : "# Notes\\n", "file_path" : "notes.md" }'),
    write('{\n  "file_path": "notes.md",\n  "content": "# Notes\\n",\n  "overwrite": true\n}'),
    { text: "The notes are written." },
  ];
  fs.writeFileSync(path.join(ws, "script.json"), JSON.stringify({ responses }));

  const settings: ForgeSettings = { pythonPath: "python3", maxRepeatedCallsPerTurn: 3 };
  const python = process.env.FORGE_PYTHON || "python3";
  const proc = spawn(python, ["-m", "forge_lsp"], { env: serverEnv(DIRECT), stdio: ["pipe", "pipe", "inherit"] });
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const events: ForgeEvent[] = [];
  const offers: string[] = [];
  const diagnostics = new Map<string, Diagnostic[]>();
  conn.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
    params.items.map((item) => (item.section === "forge" ? serverSettings(settings) : null)),
  );
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("client/registerCapability", () => null);
  // The interrupt's warning: the user presses Continue.
  conn.onRequest("window/showMessageRequest", (p: { message: string }) => {
    offers.push(p.message);
    return { title: "Continue" };
  });
  conn.onNotification("$/progress", () => undefined);
  conn.onNotification("forge/event", (e: ForgeEvent) => events.push(e));
  conn.onNotification("textDocument/publishDiagnostics", (p: { uri: string; diagnostics: Diagnostic[] }) => diagnostics.set(p.uri, p.diagnostics));
  conn.onNotification("window/logMessage", () => undefined);
  conn.onNotification("window/showMessage", () => undefined);
  conn.listen();
  try {
    const root = pathToFileURL(ws).toString();
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "ws" }],
      capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true } },
      initializationOptions: initializationOptions(settings, true),
    });
    await conn.sendNotification("initialized", {});

    const result = (await conn.sendRequest("workspace/executeCommand", {
      command: "forge.run",
      arguments: [{ prompt: "write the notes" }],
    })) as { status: string; reason: { kind: string; limit: number; tool: string } };
    assert.equal(result.status, "interrupted");
    assert.deepEqual(result.reason, { kind: "MaxRepeatedCallsReached", limit: 3, tool: "write" });
    let bar = "$(check) Forge: idle";
    for (const e of events) {
      bar = statusText(bar, e);
    }
    assert.match(bar, /^\$\(error\) Forge: interrupted/);

    const errors = [...diagnostics.values()].flat().filter((d) => d.severity === 1);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].code, "max-repeated-calls-per-turn");
    assert.match(errors[0].message, /^Repeated call limit \(3\) reached for this turn: write was called 3 times in a row/);

    // Continue: a new turn, which completes.
    const deadline = Date.now() + 60_000;
    while (events.filter((e) => e.type === "turnFinished").length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(offers.length, 1);
    assert.match(offers[0], /Repeated call limit \(3\).*Continue anyway\?$/);
    assert.deepEqual(
      events.filter((e) => e.type === "turnFinished").map((e) => e.status),
      ["interrupted", "completed"],
    );

    const config = (await conn.sendRequest("workspace/executeCommand", {
      command: "forge.showConfig",
      arguments: [{}],
    })) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(config["max_repeated_calls_per_turn"], { value: 3, source: "editor" });

    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    proc.kill();
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
