import { strict as assert } from "node:assert";
import { test } from "node:test";
import { formatEvent, statusText } from "../events";

test("status bar follows a turn: running tool, retry N left, interrupted, idle", () => {
  let s = "$(check) Forge: idle";
  s = statusText(s, { type: "turnStarted", turnId: "t" });
  assert.equal(s, "$(sync~spin) Forge: running");
  s = statusText(s, { type: "toolCallStarted", turnId: "t", tool: "shell" });
  assert.equal(s, "$(sync~spin) Forge: shell");
  s = statusText(s, { type: "retry", turnId: "t", tool: "shell", attemptsLeft: 2, limit: 3 });
  assert.equal(s, "$(warning) Forge: retry, 2 left (shell)");
  s = statusText(s, { type: "assistantText", turnId: "t", text: "x" });
  assert.equal(s, "$(warning) Forge: retry, 2 left (shell)");
  assert.equal(statusText(s, { type: "turnFinished", turnId: "t", status: "interrupted" }), "$(error) Forge: interrupted");
  assert.equal(statusText(s, { type: "turnFinished", turnId: "t", status: "completed" }), "$(check) Forge: idle");
});

test("output lines", () => {
  assert.equal(formatEvent({ type: "retry", turnId: "t", tool: "patch", attemptsLeft: 1, limit: 3 }), "  ↻ patch failed: 1 of 3 attempts left");
  assert.equal(formatEvent({ type: "toolCallStarted", turnId: "t", tool: "shell", title: "shell: pytest" }), "  → shell: pytest");
  assert.equal(formatEvent({ type: "assistantText", turnId: "t" }), undefined);
});
