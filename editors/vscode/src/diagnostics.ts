// forge/diagnostics: after an edit of the agent, the server asks for VS Code's own diagnostics of the file (every
// provider's: the language servers, TypeScript's built-in ones, linters; never Forge's), once they caught up with the
// edit, and the model reads the new problems in that call's result ([verify] in the server's config).
//
// "Caught up": a change of the document's diagnostics (languages.onDidChangeDiagnostics) came after it reached the
// version in which the server saw the edit, and none more for a moment (TypeScript reports syntax and semantic
// diagnostics apart: the moment is SETTLE_MS, or twice the longest gap seen between one version's passes of that
// language, which a loaded machine widens); or a quiet period passed with none coming: for a language whose providers were seen to say
// nothing after an edit (TypeScript reports only a change), twice the slowest of its last report times, once a
// few are known; a language nothing reported on in this session gets a short one. waitMs bounds it all. A file that
// is not open is opened without being shown (workspace.openTextDocument), so its language servers see it, and
// their first report is waited for. Pure (no `vscode` import): unit-tested in node.

export const DIAGNOSTICS = "forge/diagnostics";
/** None more for this long after a change: the providers' reports are in (TypeScript: syntax, then semantic). A
 * language whose passes were seen further apart (a loaded machine) gets twice the longest of its last SAMPLES gaps, up
 * to MAX_SETTLE_MS. */
export const SETTLE_MS = 200;
export const MAX_SETTLE_MS = 1500;
/** Two changes of one version further apart than this are two reports (another file's edit), not one's passes. */
export const BURST_MS = 1000;
/** The least quiet period of a language whose providers are known to report. */
export const QUIET_FLOOR_MS = 300;
/** How many of a language's report times are kept; a quiet period shorter than waitMs needs LEARNT_AFTER of them. */
export const SAMPLES = 5;
export const LEARNT_AFTER = 3;
/** The quiet period of a language nothing has reported on in this session (most likely none does). */
export const UNKNOWN_QUIET_MS = 500;
export const MAX_WAIT_MS = 60000;
/** The source of Forge's own diagnostics (a failed call's Warning on its file): never the editor's problems. */
export const FORGE_SOURCE = "forge";

export interface DiagnosticsRequest {
  documents: { uri: string; version: number | null }[];
  waitMs: number;
}

export interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  source?: string;
  code?: string | number;
  message: string;
}

export interface DiagnosticsAnswer {
  uri: string;
  diagnostics: LspDiagnostic[];
  caughtUp: boolean;
}

/** A document as the answer needs it: its version and language, and whether it was opened for this request. */
export interface OpenedDocument {
  key: string;
  version: number;
  languageId: string;
  openedNow: boolean;
}

/** What the extension needs of VS Code. */
export interface Editor {
  /** The document of a server URI, opened without being shown when it is not open; undefined: no such file. */
  open(uri: string): Promise<OpenedDocument | undefined>;
  /** Its diagnostics now, every source but Forge's, as LSP diagnostics. */
  diagnostics(key: string): LspDiagnostic[];
  now(): number;
}

interface Change {
  at: number;
  version: number;
}

/** The diagnostics changes of each document (Forge's own left out), and how long each language takes to report. */
export class DiagnosticsWatch {
  private changes = new Map<string, Change[]>();
  private held = new Map<string, { mine: string; others: string }>();
  private latency = new Map<string, number[]>();
  private gaps = new Map<string, number[]>();
  private seen = new Set<string>();
  private silent = new Set<string>();
  private listeners = new Map<string, (() => void)[]>();

  /** A change of a document's diagnostics (onDidChangeDiagnostics): mine and others, Forge's and the other sources'
   * as one string each; a change of Forge's alone is none. */
  record(key: string, languageId: string | undefined, version: number, mine: string, others: string, at: number): void {
    const before = this.held.get(key);
    this.held.set(key, { mine, others });
    if (before && mine !== before.mine && others === before.others) {
      return;
    }
    if (languageId) {
      this.seen.add(languageId);
    }
    const list = this.changes.get(key) ?? [];
    const previous = list[list.length - 1];
    if (languageId && previous?.version === version && at - previous.at < BURST_MS) {
      this.gaps.set(languageId, [...(this.gaps.get(languageId) ?? []), at - previous.at].slice(-SAMPLES));
    }
    list.push({ at, version });
    this.changes.set(key, list.slice(-20));
    for (const wake of this.listeners.get(key)?.splice(0) ?? []) {
      wake();
    }
  }

  /** The document is gone (closed): what was seen of it goes too. */
  forget(key: string): void {
    this.changes.delete(key);
    this.held.delete(key);
  }

  /** A promise of the document's next change, or of ms passing. */
  changed(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const list = this.listeners.get(key) ?? [];
      list.push(done);
      this.listeners.set(key, list);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private since(doc: OpenedDocument, version: number, asked: number): Change[] {
    return (this.changes.get(doc.key) ?? []).filter((c) => (doc.openedNow ? c.at >= asked : c.version >= version));
  }

  /** Whether the document's diagnostics are current at time t (see the module's comment); when to look again. */
  current(doc: OpenedDocument, version: number, asked: number, waitMs: number, t: number): { done: boolean; next: number } {
    const found = this.since(doc, version, asked);
    if (found.length > 0) {
      const quietSince = found[found.length - 1].at;
      const settle = this.settleMs(doc.languageId);
      return { done: t - quietSince >= settle, next: quietSince + settle };
    }
    const times = this.latency.get(doc.languageId) ?? [];
    const learnt = this.silent.has(doc.languageId) && times.length >= LEARNT_AFTER;
    const quiet = learnt ? Math.max(QUIET_FLOOR_MS, 2 * Math.max(...times)) : this.seen.has(doc.languageId) ? waitMs : UNKNOWN_QUIET_MS;
    // A quiet period as long as the wait is the wait running out: not caught up.
    return { done: quiet < waitMs && t - asked >= quiet, next: asked + Math.min(quiet, waitMs) };
  }

  /** How long none more must come after a change of a document of this language (see SETTLE_MS). */
  settleMs(languageId: string): number {
    const gaps = this.gaps.get(languageId) ?? [];
    return Math.min(MAX_SETTLE_MS, Math.max(SETTLE_MS, 2 * Math.max(0, ...gaps)));
  }

  /** An answer came: how long the language's providers took to report (its last SAMPLES times are kept), or that
   * they said nothing within the wait (then the language gets a quiet period once its times are known). */
  learn(doc: OpenedDocument, version: number, asked: number): void {
    const first = this.since(doc, version, asked)[0];
    if (!first && this.seen.has(doc.languageId)) {
      this.silent.add(doc.languageId);
    }
    if (first && doc.languageId) {
      const times = [...(this.latency.get(doc.languageId) ?? []), Math.max(0, first.at - asked)];
      this.latency.set(doc.languageId, times.slice(-SAMPLES));
    }
  }
}

async function answer(uri: string, version: number | null, waitMs: number, editor: Editor, watch: DiagnosticsWatch): Promise<DiagnosticsAnswer> {
  let doc: OpenedDocument | undefined;
  try {
    doc = await editor.open(uri);
  } catch {
    doc = undefined;
  }
  if (!doc) {
    return { uri, diagnostics: [], caughtUp: true }; // no such file: nothing to report on
  }
  const asked = editor.now();
  const at = typeof version === "number" && !doc.openedNow ? version : doc.version;
  let caughtUp = waitMs <= 0;
  const deadline = asked + waitMs;
  while (!caughtUp) {
    const t = editor.now();
    const { done, next } = watch.current(doc, at, asked, waitMs, t);
    if (done) {
      watch.learn(doc, at, asked);
      caughtUp = true;
      break;
    }
    if (t >= deadline) {
      watch.learn(doc, at, asked);
      break;
    }
    await watch.changed(doc.key, Math.min(next, deadline) - t);
  }
  return { uri, diagnostics: editor.diagnostics(doc.key), caughtUp };
}

/** The request handler: one answer per document, in order, each once its diagnostics are current (at most waitMs). */
export async function answerDiagnostics(params: DiagnosticsRequest, editor: Editor, watch: DiagnosticsWatch): Promise<DiagnosticsAnswer[]> {
  const wait = Math.min(Math.max(Number(params?.waitMs) || 0, 0), MAX_WAIT_MS);
  const documents = Array.isArray(params?.documents) ? params.documents : [];
  return Promise.all(documents.filter((d) => typeof d?.uri === "string").map((d) => answer(d.uri, d.version, wait, editor, watch)));
}

/** The client capability that tells the server this extension answers forge/diagnostics. */
export function withDiagnosticsCapability(capabilities: { experimental?: unknown }): void {
  const experimental = typeof capabilities.experimental === "object" && capabilities.experimental !== null ? capabilities.experimental : {};
  const forge = (experimental as { forge?: unknown }).forge;
  capabilities.experimental = { ...experimental, forge: { ...(typeof forge === "object" && forge !== null ? forge : {}), diagnostics: true } };
}

/** turnFinished's and forge.run's problems {count, files: [{path, count}]} as "2 new problems in app.py" (undefined:
 * none). */
export function problemsPhrase(problems: unknown): string | undefined {
  const p = problems as { count?: unknown; files?: unknown } | undefined;
  const count = typeof p?.count === "number" ? p.count : 0;
  if (count <= 0) {
    return undefined;
  }
  const files = (Array.isArray(p?.files) ? p.files : []).map((f: { path?: unknown }) => String(f?.path));
  let where: string;
  if (files.length <= 1) {
    where = files[0] ?? "?";
  } else if (files.length <= 3) {
    where = `${files.slice(0, -1).join(", ")} and ${files[files.length - 1]}`;
  } else {
    const more = files.length - 3;
    where = `${files.slice(0, 3).join(", ")} and ${more} more file${more === 1 ? "" : "s"}`;
  }
  return `${count} new problem${count === 1 ? "" : "s"} in ${where}`;
}
