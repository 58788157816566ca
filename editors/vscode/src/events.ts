// Pure: forge/event payloads -> output-channel lines and status-bar text.

/** A forge/event notification ({type, turnId, ...}). */
export interface ForgeEvent {
  type: string;
  turnId: string;
  [key: string]: unknown;
}

/** One line for the output channel, or undefined for events not worth a line. */
export function formatEvent(e: ForgeEvent): string | undefined {
  switch (e.type) {
    case "turnStarted":
      return `▶ turn ${e.turnId} started (model ${String(e.model)}): ${String(e.prompt)}`;
    case "toolCallStarted":
      return `  → ${String(e.title || e.tool)}`;
    case "toolCallFinished":
      return `  ${e.ok ? "✓" : "✗"} ${String(e.tool)}`;
    case "retry":
      return `  ↻ ${String(e.tool)} failed: ${String(e.attemptsLeft)} of ${String(e.limit)} attempts left`;
    case "llmRetry":
      return `  ⟳ model request retry ${String(e.attempt)} in ${String(e.delayMs)} ms: ${String(e.cause)}`;
    case "interrupt":
      return `  ⛔ ${String(e.message)}`;
    case "turnFinished":
      return `■ turn ${String(e.status)}`;
    default:
      return undefined;
  }
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
    case "turnFinished":
      return e.status === "interrupted" ? "$(error) Forge: interrupted" : "$(check) Forge: idle";
    default:
      return previous;
  }
}
