import { strict as assert } from "node:assert";
import { test } from "node:test";
import { chatParts, statusText, turnNotice } from "../events";

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

test("a turn ends with one notice: completed and cancelled here; interrupted and failed-with-error by the server", () => {
  const summary = { requests: 2, toolCalls: 1, failures: 0 };
  assert.deepEqual(turnNotice({ type: "turnFinished", turnId: "t", status: "completed", summary }), {
    level: "info",
    message: "Forge: turn completed (2 requests, 1 tool calls, 0 failures)",
  });
  assert.deepEqual(turnNotice({ type: "turnFinished", turnId: "t", status: "cancelled", summary }), { level: "info", message: "Forge: turn cancelled" });
  assert.equal(turnNotice({ type: "turnFinished", turnId: "t", status: "interrupted", summary }), undefined);
  assert.equal(turnNotice({ type: "turnFinished", turnId: "t", status: "failed", summary: { error: "no model" } }), undefined);
  assert.equal(turnNotice({ type: "turnFinished", turnId: "t", status: "failed", summary })?.level, "error");
  assert.equal(turnNotice({ type: "interrupt", turnId: "t" }), undefined);
  assert.equal(turnNotice({ type: "retry", turnId: "t" }), undefined);
});

test("the chat's view of events: text as markdown, calls and retries as progress, edited files as references", () => {
  assert.deepEqual(chatParts({ type: "assistantText", turnId: "t", text: "Hi" }), [{ kind: "markdown", text: "Hi" }]);
  assert.deepEqual(chatParts({ type: "toolCallStarted", turnId: "t", tool: "shell", title: "shell: pytest" }), [{ kind: "progress", text: "shell: pytest" }]);
  assert.deepEqual(chatParts({ type: "retry", turnId: "t", tool: "shell", attemptsLeft: 2, limit: 3 }), [{ kind: "progress", text: "retry 2/3 shell" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "write", ok: true, path: "a.md" }), [{ kind: "reference", path: "a.md" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "write", ok: false, path: "a.md" }), []);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "read", ok: true, path: "a.md" }), []);
  assert.deepEqual(chatParts({ type: "interrupt", turnId: "t", message: "limit (3) reached" }), [{ kind: "interrupt", message: "limit (3) reached" }]);
  assert.deepEqual(chatParts({ type: "turnFinished", turnId: "t", status: "completed" }), []);
});
