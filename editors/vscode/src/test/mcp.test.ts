import { strict as assert } from "node:assert";
import { test } from "node:test";
import { serverActions, serverItems, stateText } from "../mcp";
import { serverSettings } from "../settings";

const answer = {
  servers: [
    { name: "time", state: "ready", source: "editor", tools: [{ name: "get_current_time", description: "Get the time\nin a zone" }, { name: "convert_time" }] },
    { name: "broken", state: "failed", source: "workspace", reason: "exited with code 3\n(see the log)", tools: [] },
    { name: "off", state: "disabled", source: "user", tools: [] },
  ],
};

test("each server's state as a person reads it", () => {
  assert.equal(stateText(answer.servers[0]), "ready (2 tools)");
  assert.equal(stateText({ name: "one", state: "ready", tools: [{ name: "t" }] }), "ready (1 tool)");
  assert.equal(stateText(answer.servers[1]), "failed: exited with code 3 · (see the log)");
  assert.equal(stateText({ name: "s", state: "starting" }), "starting");
  // forge.restartMcpServer's answer gives the number of tools.
  assert.equal(stateText({ name: "time", state: "ready", tools: 2 }), "ready (2 tools)");
});

test("the first quick pick: one row per server, state, source and tools", () => {
  assert.deepEqual(serverItems(answer), [
    { label: "time", description: "ready (2 tools)", detail: "settings (forge.mcpServers) · get_current_time, convert_time", server: "time" },
    { label: "broken", description: "failed: exited with code 3 · (see the log)", detail: ".mcp.json", server: "broken" },
    { label: "off", description: "disabled", detail: "~/.config/forge-lsp/mcp.json", server: "off" },
  ]);
  assert.deepEqual(serverItems(undefined), []);
  assert.deepEqual(serverItems({ servers: "nope" }), []);
});

test("picking a server offers Restart, then lists its tools", () => {
  const items = serverActions(answer.servers[0]);
  assert.equal(items[0].label, "$(debug-restart) Restart time");
  assert.equal(items[0].restart, true);
  assert.deepEqual(
    items.slice(1).map((i) => [i.label, i.description, i.restart]),
    [
      ["get_current_time", "Get the time · in a zone", undefined],
      ["convert_time", undefined, undefined],
    ],
  );
});

test("forge.mcpServers reaches the server as settings.mcpServers; an empty one does not", () => {
  const servers = { time: { command: "uvx", args: ["mcp-server-time"] } };
  assert.deepEqual(serverSettings({ mcpServers: servers }), { mcpServers: servers });
  assert.deepEqual(serverSettings({ mcpServers: {} }), {});
});
