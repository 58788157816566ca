import { strict as assert } from "node:assert";
import { test } from "node:test";
import { initializationOptions, serverCommand, serverSettings } from "../settings";

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
