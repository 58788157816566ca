// forge/reloadDocuments: a command of the agent (the shell, an MCP tool) changed a file on disk whose editor had
// no unsaved changes; the server asks the extension for that document's new text before the agent's next tool
// call. VS Code reads an unmodified document again from the disk itself when its file changes (its file
// watcher); the extension waits for that (the language client sends the server the didChange) and answers once
// the document holds the disk's text. A document with unsaved changes, or changed since the server saw it, is
// never read again: the server tells the model and the user instead. Pure (no `vscode` import): unit-tested in
// node.

import { CHANGED_SINCE } from "./saves";

export const RELOAD_DOCUMENTS = "forge/reloadDocuments";
/** The reason for a document the user has unsaved changes in: the server tells the model it was kept. */
export const UNSAVED = "it has unsaved changes";
/** How long the extension waits for VS Code to read a changed file again. */
export const RELOAD_WAIT_MS = 5000;

export interface ReloadRequest {
  documents: { uri: string; version: number | null }[];
}

export interface ReloadAnswer {
  reloaded: boolean;
  reason?: string;
}

/** What reloading needs of a vscode.TextDocument. */
export interface ReloadableDocument {
  version: number;
  isDirty: boolean;
  getText(): string;
}

/** What the extension needs of VS Code: the open document of a URI as the server sends it, the file's text on
 * disk (undefined: not there), and a promise of the document's next change (or of ms passing). */
export interface Workspace {
  find(uri: string): ReloadableDocument | undefined;
  disk(uri: string): Promise<string | undefined>;
  changed(doc: ReloadableDocument, ms: number): Promise<void>;
}

/** The text as compared with the disk: a byte order mark and one final line ending do not count. */
function plain(text: string): string {
  return text.replace(/^\ufeff/, "").replace(/(\r\n|\n|\r)$/, "");
}

async function reload(uri: string, version: number | null, ws: Workspace, waitMs: number): Promise<ReloadAnswer> {
  const doc = ws.find(uri);
  if (!doc) {
    return { reloaded: false, reason: "it is not open in VS Code" };
  }
  if (typeof version === "number" && doc.version !== version) {
    return { reloaded: false, reason: CHANGED_SINCE };
  }
  if (doc.isDirty) {
    return { reloaded: false, reason: UNSAVED };
  }
  const text = await ws.disk(uri);
  if (text === undefined) {
    return { reloaded: false, reason: "the file is not on disk" };
  }
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (doc.isDirty) {
      return { reloaded: false, reason: UNSAVED }; // the user typed while VS Code had not read it yet
    }
    if (plain(doc.getText()) === plain(text)) {
      return { reloaded: true };
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      return { reloaded: false, reason: `VS Code did not read it again within ${waitMs / 1000} s` };
    }
    await ws.changed(doc, left);
  }
}

/** Each document read again from the disk (by VS Code); one answer per document, in order. */
export async function reloadDocuments(params: ReloadRequest, ws: Workspace, waitMs = RELOAD_WAIT_MS): Promise<ReloadAnswer[]> {
  return Promise.all((params?.documents ?? []).map(({ uri, version }) => reload(uri, version, ws, waitMs)));
}

/** The client capability that tells the server this extension reads documents again when asked. */
export function withReloadCapability(capabilities: { experimental?: unknown }): void {
  const experimental = typeof capabilities.experimental === "object" && capabilities.experimental !== null ? capabilities.experimental : {};
  const forge = (experimental as { forge?: unknown }).forge;
  capabilities.experimental = { ...experimental, forge: { ...(typeof forge === "object" && forge !== null ? forge : {}), reloadDocuments: true } };
}
