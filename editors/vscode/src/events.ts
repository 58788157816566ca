// Pure: forge/event payloads -> output-channel lines and status-bar text.
import { problemsPhrase } from "./diagnostics";

/** A forge/event notification ({type, turnId, ...}). */
export interface ForgeEvent {
  type: string;
  turnId: string;
  [key: string]: unknown;
}

/** A notification for the user. */
export interface Notice {
  level: "info" | "warning" | "error";
  message: string;
}

interface Summary {
  requests?: number;
  toolCalls?: number;
  failures?: number;
  error?: string;
}

/**
 * The one notification a turn ends with, from its turnFinished event (so a turn started by Continue
 * is told as well as one started from the palette). An interrupt is told by the server's own
 * Continue request and a failure by its error message: nothing more here, or the user gets two.
 */
/** "1 request", "2 requests", "0 failures". */
export function plural(n: number, noun: string): string {
  return `${String(n)} ${noun}${n === 1 ? "" : "s"}`;
}

export function turnNotice(e: ForgeEvent): Notice | undefined {
  if (e.type !== "turnFinished") {
    return undefined;
  }
  const s = (e.summary ?? {}) as Summary;
  const counts = [
    plural(s.requests ?? 0, "request"),
    plural(s.toolCalls ?? 0, "tool call"),
    plural(s.failures ?? 0, "failure"),
  ].join(", ");
  const left = problemsPhrase(e.problems);
  switch (e.status) {
    case "completed":
      // Not a plain "completed" while the editor reports problems the turn's edits made.
      return left
        ? { level: "warning", message: `Forge: turn completed; ${left} (${counts})` }
        : { level: "info", message: `Forge: turn completed (${counts})` };
    case "cancelled":
      return { level: "info", message: "Forge: turn cancelled" };
    case "failed":
      return s.error ? undefined : { level: "error", message: `Forge: turn failed (${counts})` };
    default:
      return undefined;
  }
}

/**
 * What a Forge: Cancel says, from forge.cancel's answer {cancelled, stopped?}: what the server stopped (the
 * running shell command killed, the model's reply), in its words. The cancelled turn's own turnFinished then
 * says nothing (one notification). undefined for no answer (an error, told already).
 */
export function cancelNotice(result: unknown): Notice | undefined {
  if (typeof result !== "object" || result === null) {
    return undefined;
  }
  const r = result as { cancelled?: unknown; stopped?: unknown };
  if (r.cancelled !== true) {
    return { level: "info", message: "Forge: no turn is running" };
  }
  const stopped = typeof r.stopped === "string" && r.stopped !== "" ? `; ${r.stopped}` : "";
  return { level: "info", message: `Forge: turn cancelled${stopped}` };
}

/** The status bar: idle / running tool / retry N left / interrupted. */
export function statusText(previous: string, e: ForgeEvent): string {
  switch (e.type) {
    case "turnStarted":
      return "$(sync~spin) Forge: running";
    case "toolCallStarted":
      return `$(sync~spin) Forge: ${String(e.tool)}`;
    case "retry":
      return `$(warning) Forge: retry, ${String(e.attemptsLeft)} left (${String(e.tool)})`;
    case "interrupt":
      return "$(error) Forge: interrupted";
    case "turnFinished": {
      const text = e.status === "interrupted" ? "$(error) Forge: interrupted" : "$(check) Forge: idle";
      const usage = usageText(e.usage);
      return usage ? `${text} · ${usage}` : text;
    }
    default:
      return previous;
  }
}

/** What the chat view shows of one event: streamed text, a progress line, an edited file, an interrupt. */
export type ChatPart =
  | { kind: "markdown"; text: string }
  | { kind: "progress"; text: string }
  | { kind: "reference"; path: string }
  | { kind: "interrupt"; message: string };

/** The kinds of call (the server's toolCallFinished `kind`) whose success changed the file it names (a reference in the chat). */
export const EDIT_KINDS = new Set(["edit", "delete"]);

/** The same for a server older than the `kind` field: its file tools by name (a new server's events carry the kind). */
const OLD_SERVER_EDIT_TOOLS = new Set(["write", "patch", "multi_patch", "remove", "undo"]);

/** Whether a toolCallFinished is a call that changed the file in its path. */
export function changedFile(e: ForgeEvent): boolean {
  return typeof e.kind === "string" ? EDIT_KINDS.has(e.kind) : OLD_SERVER_EDIT_TOOLS.has(String(e.tool));
}

/**
 * The chat's view of a forge/event: the same progress lines as the work-done progress ("shell: pytest",
 * "retry 2/3 shell"), the reply as markdown, each edited file once it is written.
 */
export function chatParts(e: ForgeEvent): ChatPart[] {
  switch (e.type) {
    case "assistantText":
      return typeof e.text === "string" && e.text ? [{ kind: "markdown", text: e.text }] : [];
    case "toolCallStarted":
      return [{ kind: "progress", text: String(e.title || e.tool) }];
    case "retry":
      return [{ kind: "progress", text: `retry ${String(e.attemptsLeft)}/${String(e.limit)} ${String(e.tool)}` }];
    case "toolCallFinished":
      return e.ok === true && changedFile(e) && typeof e.path === "string" && e.path
        ? [{ kind: "reference", path: e.path }]
        : [];
    case "interrupt":
      return [{ kind: "interrupt", message: String(e.message ?? "the turn was interrupted") }];
    case "problems":
      // The editor's own diagnostics of the file a call changed: its new problems, as a progress line.
      return typeof e.count === "number" && e.count > 0
        ? [{ kind: "progress", text: `editor: ${problemsPhrase({ count: e.count, files: [{ path: e.path }] }) ?? ""}` }]
        : [];
    case "turnFinished": {
      const left = problemsPhrase(e.problems);
      return left ? [{ kind: "markdown", text: `\n\n⚠ The editor reports ${left} that this turn's edits made.` }] : [];
    }
    default:
      return [];
  }
}

/** A usage ({promptTokens, completionTokens, cachedTokens, cost}) as "12.3k tokens, $0.0123"; "" without one. */
export function usageText(usage: unknown): string {
  if (typeof usage !== "object" || usage === null) {
    return "";
  }
  const u = usage as { promptTokens?: unknown; completionTokens?: unknown; cost?: unknown };
  const tokens = (typeof u.promptTokens === "number" ? u.promptTokens : 0) + (typeof u.completionTokens === "number" ? u.completionTokens : 0);
  const cost = typeof u.cost === "number" ? `$${u.cost.toFixed(4)}` : "cost unknown";
  return `${tokenCount(tokens)} tokens, ${cost}`;
}

/** 950 -> "950", 12345 -> "12.3k". */
export function tokenCount(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** A stored conversation as forge.listConversations gives it. */
export interface Conversation {
  id: string;
  title: string;
  turns: number;
  lastStatus: string | null;
  tokens: number;
  updated: string;
}

/** The quick-pick items of "Forge: Open Conversation": the title, then turns, status, tokens and when. */
export function conversationItems(list: unknown): { label: string; description: string; detail: string; id: string }[] {
  if (!Array.isArray(list)) {
    return [];
  }
  return (list as Conversation[])
    .filter((c) => c && typeof c.id === "string")
    .map((c) => ({
      label: c.title || "(no turn yet)",
      description: `${c.turns} turn${c.turns === 1 ? "" : "s"}${c.lastStatus ? `, ${c.lastStatus}` : ""}, ${tokenCount(c.tokens)} tokens`,
      detail: `${c.updated.replace("T", " ").replace("Z", " UTC")} · ${c.id}`,
      id: c.id,
    }));
}
