import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  answerDiagnostics,
  DiagnosticsWatch,
  Editor,
  LspDiagnostic,
  OpenedDocument,
  problemsPhrase,
  LEARNT_AFTER,
  MAX_SETTLE_MS,
  QUIET_FLOOR_MS,
  SETTLE_MS,
  UNKNOWN_QUIET_MS,
  withDiagnosticsCapability,
} from "../diagnostics";
import { withReloadCapability } from "../reloads";
import { withSaveCapability } from "../saves";
import { chatParts, turnNotice } from "../events";

const F821: LspDiagnostic = {
  range: { start: { line: 2, character: 6 }, end: { line: 2, character: 20 } },
  severity: 1,
  source: "ts",
  code: 2304,
  message: "Cannot find name 'undefinedName'.",
};

/** A VS Code with documents (open or on disk only) whose diagnostics a provider reports after `delay` ms. */
function vscode(docs: Record<string, { version: number; open: boolean; languageId?: string }>) {
  const watch = new DiagnosticsWatch();
  const reported: Record<string, LspDiagnostic[]> = {};
  const opened: string[] = [];
  const editor: Editor = {
    open: async (uri) => {
      const d = docs[uri];
      if (!d) {
        return undefined;
      }
      const openedNow = !d.open;
      if (openedNow) {
        opened.push(uri);
        d.open = true;
      }
      return { key: uri, version: d.version, languageId: d.languageId ?? "typescript", openedNow } satisfies OpenedDocument;
    },
    diagnostics: (key) => reported[key] ?? [],
    now: () => Date.now(),
  };
  /** The provider reports diagnostics of uri in ms (at the document's version then). */
  const report = (uri: string, diagnostics: LspDiagnostic[], ms: number, mine = "") =>
    setTimeout(() => {
      reported[uri] = diagnostics;
      watch.record(uri, docs[uri].languageId ?? "typescript", docs[uri].version, mine, JSON.stringify(diagnostics), Date.now());
    }, ms);
  return { watch, editor, report, opened };
}

test("a provider's report after the edit's version is the answer, as soon as it settled", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 4, open: true } });
  report("file:///a.ts", [F821], 120);
  const started = Date.now();
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 4 }], waitMs: 2000 }, editor, watch);
  const took = Date.now() - started;
  assert.deepEqual(answer, { uri: "file:///a.ts", diagnostics: [F821], caughtUp: true });
  assert.ok(took >= 120 + SETTLE_MS - 20 && took < 120 + SETTLE_MS + 300, `took ${took} ms`);
});

test("syntax then semantic diagnostics: the second report within the settle time is waited for", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 2, open: true } });
  report("file:///a.ts", [], 50);
  report("file:///a.ts", [F821], 50 + SETTLE_MS / 2);
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 2000 }, editor, watch);
  assert.deepEqual(answer.diagnostics, [F821]);
});

test("a loaded machine: passes seen further apart than the settle time are waited for at the next edit", async () => {
  const docs = { "file:///a.ts": { version: 1, open: true } };
  const { watch, editor, report } = vscode(docs);
  const slow = 2 * SETTLE_MS; // the semantic pass this long after the syntax pass
  // Version 1: the answer (a settle time after the syntax pass) misses the semantic pass; the gap is learnt.
  report("file:///a.ts", [], 30);
  report("file:///a.ts", [F821], 30 + slow);
  const [missed] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 1 }], waitMs: 2000 }, editor, watch);
  assert.deepEqual(missed.diagnostics, []);
  await new Promise((r) => setTimeout(r, slow));
  const learnt = watch.settleMs("typescript"); // twice the gap, as the timers kept it
  assert.ok(learnt > 2 * slow - 40 && learnt <= MAX_SETTLE_MS, `settle ${learnt} ms`);
  assert.equal(watch.settleMs("python"), SETTLE_MS); // another language's stays as it was
  // The agent's edit (version 2): its semantic pass comes as late, and is in the answer.
  docs["file:///a.ts"].version = 2;
  const late = { ...F821, message: "Cannot find name 'missingName'." };
  report("file:///a.ts", [F821], 30);
  report("file:///a.ts", [late], 30 + slow);
  const started = Date.now();
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 2000 }, editor, watch);
  const took = Date.now() - started;
  assert.deepEqual(answer, { uri: "file:///a.ts", diagnostics: [late], caughtUp: true });
  assert.ok(took >= 30 + slow + learnt - 20 && took < 30 + slow + MAX_SETTLE_MS + 300, `took ${took} ms`);
  assert.ok(watch.settleMs("typescript") <= MAX_SETTLE_MS);
});

test("waitMs 0 answers what VS Code has now; a report of an older version does not count", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 1, open: true } });
  report("file:///a.ts", [F821], 0);
  await new Promise((r) => setTimeout(r, 20));
  const [now] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 1 }], waitMs: 0 }, editor, watch);
  assert.deepEqual(now, { uri: "file:///a.ts", diagnostics: [F821], caughtUp: true });
  // The edit made version 2; the report seen was of version 1, and no other comes: the wait runs out.
  const [late] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 400 }, editor, watch);
  assert.equal(late.caughtUp, false);
});

test("a language nothing reported on in this session waits a short quiet period, not waitMs", async () => {
  const { watch, editor } = vscode({ "file:///notes.md": { version: 3, open: true, languageId: "markdown" } });
  const started = Date.now();
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///notes.md", version: 3 }], waitMs: 5000 }, editor, watch);
  const took = Date.now() - started;
  assert.deepEqual(answer, { uri: "file:///notes.md", diagnostics: [], caughtUp: true });
  assert.ok(took >= UNKNOWN_QUIET_MS - 20 && took < UNKNOWN_QUIET_MS + 300, `took ${took} ms`);
});

test("a language seen to say nothing after an edit, its report times known: a quiet edit waits twice the slowest", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 1, open: true } });
  for (let i = 1; i <= LEARNT_AFTER; i++) {
    report("file:///a.ts", [{ ...F821, message: `m${i}` }], 30);
    const [learnt] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 1 }], waitMs: 2000 }, editor, watch);
    assert.equal(learnt.caughtUp, true);
  }
  // TypeScript says nothing after an edit that changes none of its diagnostics: the first such edit waits it out.
  const [first] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 400 }, editor, watch);
  assert.equal(first.caughtUp, false);
  const started = Date.now();
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 3 }], waitMs: 5000 }, editor, watch);
  const took = Date.now() - started;
  assert.equal(answer.caughtUp, true);
  assert.ok(took >= QUIET_FLOOR_MS - 20 && took < QUIET_FLOOR_MS + 300, `took ${took} ms`);
});

test("until a few report times are known, an edit the language's providers say nothing about waits waitMs", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 1, open: true } });
  report("file:///a.ts", [F821], 30);
  await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 1 }], waitMs: 2000 }, editor, watch);
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 600 }, editor, watch);
  assert.equal(answer.caughtUp, false); // one time known: TypeScript may take a second, so the whole wait
});

test("a file not open is opened (not shown) and its first report waited for; a missing one answers at once", async () => {
  const { watch, editor, report, opened } = vscode({ "file:///b.ts": { version: 1, open: false } });
  report("file:///b.ts", [F821], 80);
  const answers = await answerDiagnostics(
    {
      documents: [
        { uri: "file:///b.ts", version: null },
        { uri: "file:///gone.ts", version: null },
      ],
      waitMs: 2000,
    },
    editor,
    watch,
  );
  assert.deepEqual(opened, ["file:///b.ts"]);
  assert.deepEqual(answers, [
    { uri: "file:///b.ts", diagnostics: [F821], caughtUp: true },
    { uri: "file:///gone.ts", diagnostics: [], caughtUp: true },
  ]);
});

test("a change of Forge's own diagnostics alone is no report of a provider", async () => {
  const { watch, editor, report } = vscode({ "file:///a.ts": { version: 1, open: true } });
  report("file:///a.ts", [], 0, "");
  await new Promise((r) => setTimeout(r, 20));
  const docs = { "file:///a.ts": { version: 2 } };
  setTimeout(() => watch.record("file:///a.ts", "typescript", docs["file:///a.ts"].version, "forge warning", "[]", Date.now()), 30);
  const [answer] = await answerDiagnostics({ documents: [{ uri: "file:///a.ts", version: 2 }], waitMs: 300 }, editor, watch);
  assert.equal(answer.caughtUp, false); // the only change was Forge's
});

test("a malformed request answers what it can", async () => {
  const { watch, editor } = vscode({});
  assert.deepEqual(await answerDiagnostics({} as never, editor, watch), []);
  assert.deepEqual(await answerDiagnostics({ documents: [{ uri: 3 }], waitMs: "x" } as never, editor, watch), []);
});

test("the capability joins the others", () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  withSaveCapability(caps);
  withReloadCapability(caps);
  withDiagnosticsCapability(caps);
  assert.deepEqual(caps.experimental, { other: 1, forge: { saveDocuments: true, reloadDocuments: true, diagnostics: true } });
});

test("a turn that leaves new problems does not end as a plain completed", () => {
  assert.equal(problemsPhrase(undefined), undefined);
  assert.equal(problemsPhrase({ count: 2, files: [{ path: "app.ts", count: 2 }] }), "2 new problems in app.ts");
  assert.equal(
    problemsPhrase({ count: 5, files: ["a", "b", "c", "d", "e"].map((path) => ({ path, count: 1 })) }),
    "5 new problems in a, b, c and 2 more files",
  );
  const summary = { requests: 2, toolCalls: 1, failures: 0 };
  const problems = { count: 1, files: [{ path: "app.ts", count: 1 }] };
  assert.deepEqual(turnNotice({ type: "turnFinished", turnId: "t", status: "completed", summary, problems }), {
    level: "warning",
    message: "Forge: turn completed; 1 new problem in app.ts (2 requests, 1 tool call, 0 failures)",
  });
  assert.deepEqual(turnNotice({ type: "turnFinished", turnId: "t", status: "completed", summary }), {
    level: "info",
    message: "Forge: turn completed (2 requests, 1 tool call, 0 failures)",
  });
});

test("the chat shows a check's new problems and what the turn leaves", () => {
  assert.deepEqual(chatParts({ type: "problems", turnId: "t", path: "app.ts", count: 2, problems: [] }), [
    { kind: "progress", text: "editor: 2 new problems in app.ts" },
  ]);
  assert.deepEqual(chatParts({ type: "problems", turnId: "t", path: "app.ts", count: 0, problems: [] }), []);
  const problems = { count: 1, files: [{ path: "app.ts", count: 1 }] };
  assert.deepEqual(chatParts({ type: "turnFinished", turnId: "t", status: "completed", problems }), [
    { kind: "markdown", text: "\n\n⚠ The editor reports 1 new problem in app.ts that this turn's edits made." },
  ]);
  assert.deepEqual(chatParts({ type: "turnFinished", turnId: "t", status: "completed" }), []);
});
