import { strict as assert } from "node:assert";
import { test } from "node:test";
import { CHANGED_SINCE, saveDocuments, SavableDocument, withSaveCapability } from "../saves";

function doc(version: number, isDirty = true, saves = true): SavableDocument & { saved: number } {
  const d = {
    version,
    isDirty,
    saved: 0,
    save: async () => {
      d.saved += 1;
      return saves;
    },
  };
  return d;
}

test("a document at the version asked is saved; one typed in since is not", async () => {
  const edited = doc(4);
  const typed = doc(6);
  const docs: Record<string, SavableDocument> = { "file:///a.py": edited, "file:///b.py": typed };
  const answers = await saveDocuments(
    { documents: [{ uri: "file:///a.py", version: 4 }, { uri: "file:///b.py", version: 5 }, { uri: "file:///c.py", version: 1 }] },
    (uri) => docs[uri],
  );
  assert.deepEqual(answers, [{ saved: true }, { saved: false, reason: CHANGED_SINCE }, { saved: false, reason: "it is not open in VS Code" }]);
  assert.equal(edited.saved, 1);
  assert.equal(typed.saved, 0);
});

test("a document already saved is not saved again; a failed save says so", async () => {
  const clean = doc(2, false);
  const failing = doc(3, true, false);
  const answers = await saveDocuments(
    { documents: [{ uri: "a", version: 2 }, { uri: "b", version: 3 }] },
    (uri) => (uri === "a" ? clean : failing),
  );
  assert.deepEqual(answers, [{ saved: true }, { saved: false, reason: "VS Code did not save it" }]);
  assert.equal(clean.saved, 0);
});

test("the capability keeps other experimental capabilities", () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  withSaveCapability(caps);
  assert.deepEqual(caps.experimental, { other: 1, forge: { saveDocuments: true } });
  const bare: { experimental?: unknown } = {};
  withSaveCapability(bare);
  assert.deepEqual(bare.experimental, { forge: { saveDocuments: true } });
});
