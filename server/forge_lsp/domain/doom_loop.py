"""Doom-loop detection: the same tool calls repeated at the end of the history."""

from __future__ import annotations

from collections.abc import Sequence

from forge_lsp.domain.messages import ChatMessage

THRESHOLD = 3


def call_signatures(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """(tool name, arguments) of every assistant tool call, in order."""
    return [(c.name, c.arguments_json) for m in messages if m.role == "assistant" for c in m.tool_calls]


def trailing_repetitions(items: Sequence[tuple[str, str]]) -> int:
    """How many times the longest-repeating trailing pattern repeats (1 if none)."""
    best = 1
    n = len(items)
    for size in range(1, n // 2 + 1):
        pattern = items[n - size :]
        reps = 1
        while (reps + 1) * size <= n and items[n - (reps + 1) * size : n - reps * size] == pattern:
            reps += 1
        best = max(best, reps)
    return best
