"""Doom-loop detection: the same tool calls repeated at the end of the history."""

from __future__ import annotations

from collections.abc import Sequence

from forge_lsp.domain.messages import ChatMessage

THRESHOLD = 3
MAX_PATTERN = 8
"""Longest repeating pattern looked for; bounds the work per request whatever the history length."""


WINDOW = THRESHOLD * MAX_PATTERN + MAX_PATTERN
"""How many of the latest tool calls the check needs to see."""


def call_signatures(messages: Sequence[ChatMessage], limit: int = WINDOW) -> list[tuple[str, str]]:
    """(tool name, arguments) of the last ``limit`` assistant tool calls, in order."""
    found: list[tuple[str, str]] = []
    for message in reversed(messages):
        if message.role == "assistant":
            for c in reversed(message.tool_calls):
                found.append((c.name, c.arguments_json))
            if len(found) >= limit:
                break
    found.reverse()
    return found[-limit:]


def trailing_repetitions(items: Sequence[tuple[str, str]]) -> int:
    """How many times the longest-repeating trailing pattern repeats (1 if none)."""
    best = 1
    n = len(items)
    for size in range(1, min(n // 2, MAX_PATTERN) + 1):
        pattern = items[n - size :]
        reps = 1
        while (reps + 1) * size <= n and items[n - (reps + 1) * size : n - reps * size] == pattern:
            reps += 1
        best = max(best, reps)
    return best
