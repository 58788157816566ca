import { strict as assert } from "node:assert";
import { test } from "node:test";
import { chatPrompt, commandItems, commandPrompt } from "../slash";

test("forge.listCommands' answer becomes quick pick items: /name, source and agent, description", () => {
  const items = commandItems({
    commands: [
      { name: "review", description: "Review the diff", source: "builtin" },
      { name: "plan", description: "Plan it", source: "workspace", agent: "muse", takesArgs: false },
      { description: "no name" },
    ],
  });
  assert.deepEqual(items, [
    { label: "/review", description: "built-in", detail: "Review the diff", name: "review", takesArgs: true },
    { label: "/plan", description: "workspace · agent muse", detail: "Plan it", name: "plan", takesArgs: false },
  ]);
  assert.deepEqual(commandItems(undefined), []);
  assert.deepEqual(commandItems({ commands: "x" }), []);
});

test("a command's prompt: /name, then its arguments when there are any", () => {
  assert.equal(commandPrompt("review", undefined), "/review");
  assert.equal(commandPrompt("review", "  "), "/review");
  assert.equal(commandPrompt("explain", " src/app.ts "), "/explain src/app.ts");
});

test("an @forge request with a slash command VS Code recognised is sent as /name text", () => {
  assert.equal(chatPrompt("review", "the parser"), "/review the parser");
  assert.equal(chatPrompt("test", ""), "/test");
  assert.equal(chatPrompt(undefined, "/mine x"), "/mine x");
  assert.equal(chatPrompt(undefined, "fix it"), "fix it");
});
