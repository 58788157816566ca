// forge/saveDocuments: after an edit of the agent that landed in a document with no unsaved changes, the
// server asks the extension to save it, so that the commands the agent runs next (a test, a build) read the
// edit from the disk, and the editor is left unmodified: no "file is newer" conflict later, and Undo still
// takes the edit back. Only a document still at the version in which the server saw the edit is saved: a
// change typed since is the user's, never saved for them. Pure (no `vscode` import): unit-tested in node.

export const SAVE_DOCUMENTS = "forge/saveDocuments";
/** The reason for a document changed since the edit: the server tells the model it holds unsaved changes. */
export const CHANGED_SINCE = "you changed it since";

export interface SaveRequest {
  documents: { uri: string; version: number | null }[];
}

export interface SaveAnswer {
  saved: boolean;
  reason?: string;
}

/** What saving needs of a vscode.TextDocument. */
export interface SavableDocument {
  version: number;
  isDirty: boolean;
  save(): PromiseLike<boolean>;
}

/** Save each document at the version asked; one answer per document, in order. find: the open document of
 * a URI as the server sends it (VS Code spells some URIs differently: the caller converts). */
export async function saveDocuments(params: SaveRequest, find: (uri: string) => SavableDocument | undefined): Promise<SaveAnswer[]> {
  const answers: SaveAnswer[] = [];
  for (const { uri, version } of params?.documents ?? []) {
    const doc = find(uri);
    if (!doc) {
      answers.push({ saved: false, reason: "it is not open in VS Code" });
    } else if (typeof version === "number" && doc.version !== version) {
      answers.push({ saved: false, reason: CHANGED_SINCE });
    } else if (!doc.isDirty) {
      answers.push({ saved: true }); // already as on disk (files.autoSave, or saved meanwhile)
    } else {
      // VS Code's own save: the user's format-on-save runs (the server tells the model when it changed the text).
      answers.push((await doc.save()) ? { saved: true } : { saved: false, reason: "VS Code did not save it" });
    }
  }
  return answers;
}

/** The client capability that tells the server this extension saves when asked. */
export function withSaveCapability(capabilities: { experimental?: unknown }): void {
  const experimental = typeof capabilities.experimental === "object" && capabilities.experimental !== null ? capabilities.experimental : {};
  const forge = (experimental as { forge?: unknown }).forge;
  capabilities.experimental = { ...experimental, forge: { ...(typeof forge === "object" && forge !== null ? forge : {}), saveDocuments: true } };
}
