import { strict as assert } from "node:assert";
import { test } from "node:test";
import { agentArgument, agentItems, agentList, withAgent } from "../agents";

const LIST = {
  current: "sage",
  agents: [
    { id: "forge", title: "Forge", description: "Implements.", source: "builtin", tools: null },
    { id: "sage", title: "Sage", description: "Researches.", source: "builtin", tools: ["read"] },
    { id: "reviewer", title: "Reviewer", description: "", source: "workspace", tools: ["read"] },
  ],
};

test("Select Agent's items: the id, its title, current and where it comes from, what it is for", () => {
  assert.deepEqual(agentItems(LIST), [
    { label: "forge", description: "Forge", detail: "Implements.", id: "forge" },
    { label: "sage", description: "Sage · current", detail: "Researches.", id: "sage" },
    { label: "reviewer", description: "Reviewer · workspace", detail: "", id: "reviewer" },
  ]);
  assert.deepEqual(agentItems(undefined), []);
  assert.deepEqual(agentItems({ agents: "x" }), []);
});

test("the status bar names the agent when it is not forge", () => {
  assert.equal(withAgent("$(check) Forge: idle", "sage"), "$(check) Forge (sage): idle");
  assert.equal(withAgent("$(sync~spin) Forge: shell", "muse"), "$(sync~spin) Forge (muse): shell");
  assert.equal(withAgent("$(check) Forge: idle", "forge"), "$(check) Forge: idle");
  assert.equal(withAgent("$(check) Forge: idle", undefined), "$(check) Forge: idle");
});

test("the chat's /agent: the id, or a list with the current one marked", () => {
  assert.equal(agentArgument("  muse  please"), "muse");
  assert.equal(agentArgument("   "), "");
  const text = agentList(LIST);
  assert.ok(text.includes("- `sage` (Sage · current): Researches."), text);
  assert.ok(text.includes("`@forge /agent ID`"), text);
  assert.equal(agentList(null), "No agents: is the Forge server running?");
});
