import { strict as assert } from "node:assert";
import { test } from "node:test";
import { ReloadableDocument, reloadDocuments, UNSAVED, withReloadCapability, Workspace } from "../reloads";
import { CHANGED_SINCE, withSaveCapability } from "../saves";

/** A document VS Code reads again from its disk text after `delay` ms (undefined: never). */
function editor(docs: Record<string, { text: string; version: number; isDirty?: boolean }>, disk: Record<string, string>, delay?: number) {
  const open: Record<string, ReloadableDocument & { text: string }> = {};
  const listeners: (() => void)[] = [];
  for (const [uri, d] of Object.entries(docs)) {
    const doc = { version: d.version, isDirty: d.isDirty ?? false, text: d.text, getText: () => doc.text };
    open[uri] = doc;
    if (delay !== undefined && !doc.isDirty) {
      setTimeout(() => {
        doc.text = disk[uri];
        doc.version += 1;
        listeners.splice(0).forEach((l) => l());
      }, delay);
    }
  }
  const ws: Workspace = {
    find: (uri) => open[uri],
    disk: async (uri) => disk[uri],
    changed: (_doc, ms) =>
      new Promise((resolve) => {
        listeners.push(resolve);
        setTimeout(resolve, ms);
      }),
  };
  return { ws, open };
}

test("an unmodified document is answered once VS Code has read the changed file again", async () => {
  const { ws, open } = editor({ "file:///a.py": { text: "a - b\n", version: 3 } }, { "file:///a.py": "a + b\n" }, 50);
  const answers = await reloadDocuments({ documents: [{ uri: "file:///a.py", version: 3 }] }, ws);
  assert.deepEqual(answers, [{ reloaded: true }]);
  assert.equal(open["file:///a.py"].text, "a + b\n");
});

test("a dirty document, one typed in since, one not open or not on disk: not read again, and why", async () => {
  const { ws } = editor(
    { "file:///d.py": { text: "mine", version: 2, isDirty: true }, "file:///t.py": { text: "x", version: 5 }, "file:///g.py": { text: "x", version: 1 } },
    { "file:///d.py": "theirs", "file:///t.py": "y" },
  );
  const answers = await reloadDocuments(
    {
      documents: [
        { uri: "file:///d.py", version: 2 },
        { uri: "file:///t.py", version: 4 },
        { uri: "file:///n.py", version: 1 },
        { uri: "file:///g.py", version: 1 },
      ],
    },
    ws,
  );
  assert.deepEqual(answers, [
    { reloaded: false, reason: UNSAVED },
    { reloaded: false, reason: CHANGED_SINCE },
    { reloaded: false, reason: "it is not open in VS Code" },
    { reloaded: false, reason: "the file is not on disk" },
  ]);
});

test("VS Code that never reads the file again is answered after the wait, not held forever", async () => {
  const { ws } = editor({ "file:///a.py": { text: "a - b\n", version: 1 } }, { "file:///a.py": "a + b\n" });
  const answers = await reloadDocuments({ documents: [{ uri: "file:///a.py", version: 1 }] }, ws, 100);
  assert.deepEqual(answers, [{ reloaded: false, reason: "VS Code did not read it again within 0.1 s" }]);
});

test("the capability sits beside saveDocuments and other experimental capabilities", () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  withSaveCapability(caps);
  withReloadCapability(caps);
  assert.deepEqual(caps.experimental, { other: 1, forge: { saveDocuments: true, reloadDocuments: true } });
});
