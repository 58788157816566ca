import { strict as assert } from "node:assert";
import { test } from "node:test";
import { findExecutable, initializationOptions, serverCommand, serverProblem, serverSettings } from "../settings";

test("client-only and empty settings are not sent to the server", () => {
  const s = serverSettings({
    serverPath: "/x/forge-lsp",
    pythonPath: "/usr/bin/python3",
    model: "openai/gpt-4o",
    maxToolFailurePerTurn: 2,
    maxRequestsPerTurn: null,
    trace: { server: "verbose" },
  });
  assert.deepEqual(s, { model: "openai/gpt-4o", maxToolFailurePerTurn: 2 });
});

test("0 turns the repeated-call stop off: it is sent, not dropped as empty", () => {
  assert.deepEqual(serverSettings({ maxRepeatedCallsPerTurn: 0, maxRequestsPerTurn: null }), { maxRepeatedCallsPerTurn: 0 });
});

test("forge.verify.diagnostics reaches the server as its [verify] table, and only when set", () => {
  assert.deepEqual(serverSettings({ verify: { diagnostics: "fail" } }), { verify: { diagnostics: "fail" } });
  assert.deepEqual(serverSettings({ verify: undefined }), {});
});

test("initializationOptions wrap the settings", () => {
  assert.deepEqual(initializationOptions({ model: "" }), { settings: {}, workspaceTrusted: false });
  assert.deepEqual(initializationOptions({ model: "openai/gpt-4o" }, true), {
    settings: { model: "openai/gpt-4o" },
    workspaceTrusted: true,
  });
});

test("server command: serverPath, then python -m forge_lsp, then forge-lsp", () => {
  assert.deepEqual(serverCommand({ serverPath: "/opt/forge-lsp", pythonPath: "/p" }), { command: "/opt/forge-lsp", args: [] });
  assert.deepEqual(serverCommand({ pythonPath: "/p" }), { command: "/p", args: ["-m", "forge_lsp"] });
  assert.deepEqual(serverCommand({}), { command: "forge-lsp", args: [] });
});

test("a server command that is not there is one line saying what to set (the README's venv is not on the editor's PATH)", () => {
  const files = new Set(["/home/me/forge-lsp/.venv/bin/forge-lsp", "/usr/bin/python3"]);
  const exists = (f: string) => files.has(f);
  const PATH = "/usr/local/bin:/usr/bin:/bin";
  assert.equal(findExecutable("python3", PATH, exists), "/usr/bin/python3");
  assert.equal(findExecutable("forge-lsp", PATH, exists), undefined);
  const missing = serverProblem({}, PATH, exists);
  assert.ok(missing?.startsWith("Forge: forge-lsp is not on PATH: set forge.serverPath to the forge-lsp of the environment"), missing);
  assert.ok(missing?.includes("`forge-lsp --print-editor-config`") && !missing.includes("pip install"), missing);
  assert.equal(serverProblem({ serverPath: "/home/me/forge-lsp/.venv/bin/forge-lsp" }, PATH, exists), undefined);
  assert.equal(serverProblem({}, `/home/me/forge-lsp/.venv/bin:${PATH}`, exists), undefined);
  assert.equal(serverProblem({ pythonPath: "python3" }, PATH, exists), undefined);
  const typo = serverProblem({ serverPath: "/home/me/forge-lsp/venv/bin/forge-lsp" }, PATH, exists);
  assert.ok(typo?.startsWith("Forge: forge.serverPath /home/me/forge-lsp/venv/bin/forge-lsp is not an executable file"), typo);
  assert.ok(serverProblem({ pythonPath: "/opt/py" }, PATH, exists)?.startsWith("Forge: forge.pythonPath /opt/py is not"));
});
