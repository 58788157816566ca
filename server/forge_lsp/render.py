"""Events as readable lines: the CLI's output and the server's window/logMessage."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any, TextIO


def _indent(text: str, prefix: str = "      ") -> str:
    return textwrap.indent(text.rstrip(), prefix)


def format_event(event: Mapping[str, Any]) -> str | None:
    """One forge/event payload as readable lines (None for events shown elsewhere)."""
    kind = event.get("type")
    if kind == "turnStarted":
        return f"▶ turn {event['turnId']} started (model {event.get('model', '?')})\n  prompt: {event.get('prompt', '')}"
    if kind == "assistantText":
        return None
    if kind == "toolCallStarted":
        return f"  → {event.get('title') or event.get('tool')}"
    if kind == "toolCallFinished":
        if event.get("ok"):
            return f"  ✓ {event['tool']} ok"
        cause = str(event.get("output", "")).split("<cause>", 1)[-1].split("</cause>", 1)[0]
        return f"  ✗ {event['tool']} failed: {cause.strip().splitlines()[0] if cause.strip() else ''}"
    if kind == "retry":
        return f"  ↻ retry notice for {event['tool']} ({event['attemptsLeft']} of {event['limit']} attempts left), sent to the model:\n{_indent('<retry>' + event['notice'] + '</retry>')}"
    if kind == "llmRetry":
        return f"  ⟳ model request failed ({event['cause']}); retry {event['attempt']} in {event['delayMs']} ms"
    if kind == "interrupt":
        reason = event["reason"]
        return (
            f"  ⛔ interrupted: {reason['kind']} {{limit: {reason['limit']}"
            + (f", errors: {reason['errors']}}}" if "errors" in reason else "}")
            + f"\n     {event.get('message', '')}"
        )
    if kind == "turnFinished":
        s = event.get("summary", {})
        line = f"■ turn {event.get('status')}: {s.get('requests', 0)} requests, {s.get('toolCalls', 0)} tool calls, {s.get('failures', 0)} failures"
        if s.get("error"):
            line += f"\n  error: {s['error']}"
        return line
    return None


class EventPrinter:
    """Prints events to a stream; streamed assistant text is gathered into one line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._text: list[str] = []

    def __call__(self, event: Mapping[str, Any]) -> None:
        if event.get("type") == "assistantText":
            self._text.append(str(event.get("text", "")))
            return
        self.flush_text()
        line = format_event(event)
        if line is not None:
            print(line, file=self.out, flush=True)

    def flush_text(self) -> None:
        """Print gathered assistant text, if any."""
        if self._text:
            text = "".join(self._text).strip()
            self._text.clear()
            if text:
                print(f"  assistant: {text}", file=self.out, flush=True)
