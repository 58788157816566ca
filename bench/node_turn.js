// Drives one forge.run through the real server from node with vscode-jsonrpc (the library VS Code uses)
// and prints the server's timing line. Used by bench/run.py: node vs Python as the client.
// usage: node bench/node_turn.js PYTHON WORKSPACE
const path = require("path");
const { spawn } = require("child_process");
const { pathToFileURL } = require("url");
const rpc = require(path.join(__dirname, "..", "editors", "vscode", "node_modules", "vscode-jsonrpc", "node"));

async function main() {
  const [python, ws] = process.argv.slice(2);
  const proc = spawn(python, ["-m", "forge_lsp"], { env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: "True" }, stdio: ["pipe", "pipe", "ignore"] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const logs = [];
  conn.onRequest("workspace/configuration", (p) => p.items.map(() => ({})));
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("window/showMessageRequest", () => null);
  conn.onNotification("window/logMessage", (p) => logs.push(p.message));
  conn.onNotification(() => undefined);
  conn.listen();
  const uri = pathToFileURL(ws).toString();
  await conn.sendRequest("initialize", { processId: process.pid, rootUri: uri, workspaceFolders: [{ uri, name: "ws" }], capabilities: { window: { workDoneProgress: true }, workspace: { configuration: true } }, initializationOptions: { workspaceTrusted: true } });
  await conn.sendNotification("initialized", {});
  await conn.sendRequest("workspace/executeCommand", { command: "forge.run", arguments: [{ prompt: "warm up" }] });
  logs.length = 0;
  const result = await conn.sendRequest("workspace/executeCommand", { command: "forge.run", arguments: [{ prompt: "go" }] });
  const timing = logs.find((m) => m.includes(" timing: "));
  process.stdout.write(JSON.stringify({ result, timing }) + "\n");
  await conn.sendRequest("shutdown");
  await conn.sendNotification("exit");
  conn.dispose();
  proc.kill();
}
main().catch((e) => { console.error(e); process.exit(1); });
