import { strict as assert } from "node:assert";
import { test } from "node:test";
import { cancelNotice, chatParts, conversationItems, statusText, turnNotice, usageText } from "../events";

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
    message: "Forge: turn completed (2 requests, 1 tool call, 0 failures)",
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
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "write", kind: "edit", ok: true, path: "a.md" }), [{ kind: "reference", path: "a.md" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "remove", kind: "delete", ok: true, path: "a.md" }), [{ kind: "reference", path: "a.md" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "write", kind: "edit", ok: false, path: "a.md" }), []);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "read", kind: "read", ok: true, path: "a.md" }), []);
  // The kind, not the name, says it: a tool the editor has never heard of that edits is shown, a "write" that reads is not.
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "rename", kind: "edit", ok: true, path: "b.md" }), [{ kind: "reference", path: "b.md" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "write", kind: "other", ok: true, path: "a.md" }), []);
  // A server older than the kind field: its file tools by name.
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "undo", ok: true, path: "a.md" }), [{ kind: "reference", path: "a.md" }]);
  assert.deepEqual(chatParts({ type: "toolCallFinished", turnId: "t", tool: "read", ok: true, path: "a.md" }), []);
  assert.deepEqual(chatParts({ type: "interrupt", turnId: "t", message: "limit (3) reached" }), [{ kind: "interrupt", message: "limit (3) reached" }]);
  assert.deepEqual(chatParts({ type: "turnFinished", turnId: "t", status: "completed" }), []);
});

test("the status bar gives the turn's tokens and cost when it ends", () => {
  const usage = { promptTokens: 12000, completionTokens: 345, cachedTokens: 0, cost: 0.0321 };
  assert.equal(statusText("x", { type: "turnFinished", turnId: "t", status: "completed", usage }), "$(check) Forge: idle · 12.3k tokens, $0.0321");
  const unknown = { promptTokens: 900, completionTokens: 20, cachedTokens: 0, cost: "unknown" };
  assert.equal(
    statusText("x", { type: "turnFinished", turnId: "t", status: "interrupted", usage: unknown }),
    "$(error) Forge: interrupted · 920 tokens, cost unknown",
  );
  assert.equal(usageText(undefined), "");
});

test("Open Conversation lists titles with turns, status, tokens and when", () => {
  const items = conversationItems([
    { id: "abc", title: "Fix the parser", turns: 2, lastStatus: "completed", tokens: 4321, updated: "2026-12-03T14:29:09Z" },
    { id: "def", title: "", turns: 0, lastStatus: null, tokens: 0, updated: "2026-12-03T14:00:00Z" },
  ]);
  assert.deepEqual(items[0], {
    label: "Fix the parser",
    description: "2 turns, completed, 4.3k tokens",
    detail: "2026-12-03 14:29:09 UTC · abc",
    id: "abc",
  });
  assert.equal(items[1].label, "(no turn yet)");
  assert.equal(items[1].description, "0 turns, 0 tokens");
  assert.deepEqual(conversationItems("not a list"), []);
});

test("Forge: Cancel says what the server stopped, from forge.cancel's answer", () => {
  assert.deepEqual(cancelNotice({ cancelled: true, turnId: "t", stopped: "the running shell command was killed (sleep 30)" }), {
    level: "info",
    message: "Forge: turn cancelled; the running shell command was killed (sleep 30)",
  });
  assert.deepEqual(cancelNotice({ cancelled: true, turnId: "t", stopped: "the model's reply was stopped" })?.message, "Forge: turn cancelled; the model's reply was stopped");
  assert.deepEqual(cancelNotice({ cancelled: true }), { level: "info", message: "Forge: turn cancelled" }); // an older server
  assert.deepEqual(cancelNotice({ cancelled: false }), { level: "info", message: "Forge: no turn is running" });
  assert.equal(cancelNotice(undefined), undefined); // an error: told as one
});
