"""Doom-loop detection: the same tool calls repeated at the end of the history.

Calls are compared by tool name and normalized arguments: a model that writes ``{"file_path": "a"}`` and then
``{ "file_path" : "a" }`` made the same call twice (key order and whitespace do not matter). Arguments that
are not JSON compare as their raw text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from forge_lsp.domain.messages import ChatMessage, ToolCall

THRESHOLD = 3
MAX_PATTERN = 8
"""Longest repeating pattern looked for; bounds the work per request whatever the history length."""


WINDOW = THRESHOLD * MAX_PATTERN + MAX_PATTERN
"""How many of the latest tool calls the reminder needs to see."""

Signature = tuple[str, str]
"""(tool name, normalized arguments) of one call; arguments longer than DIGEST_OVER as their digest."""

DIGEST_OVER = 256
"""Longer normalized arguments are kept as a digest: the window holds many calls, a write's content may be megabytes."""


NOT_RUN = "not run: "
"""How the cause of a call the repeated-call stop kept from running begins (what surfaces tell from a failure).

The result is a <tool_call_error> like a failure's, so that what reads the history (a resumed ACP session, the
todo list restored, compaction's summary) never takes the call for one that succeeded."""
TOOL_ERROR_CAUSE = "<tool_call_error><cause>"


def was_not_run(output: str) -> bool:
    """Whether a call's output says the repeated-call stop kept it from running."""
    return output.removeprefix(TOOL_ERROR_CAUSE).startswith(NOT_RUN)


def window(limit: int) -> int:
    """How many of the latest tool calls the checks need to see, for a hard stop at ``limit`` repetitions."""
    return max(THRESHOLD, limit) * MAX_PATTERN + MAX_PATTERN


def normalized(arguments_json: str, parsed: object = None) -> str:
    """The arguments as one canonical text (sorted keys, no whitespace), or the raw text when it is not JSON.

    ``parsed``: the arguments already parsed (a call's own parse, so a write of megabytes is not parsed twice)."""
    try:
        value = json.loads(arguments_json or "{}") if parsed is None else parsed
    except (ValueError, RecursionError):
        return arguments_json
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError):  # nested past what dumps recurses into: the raw text still compares
        return arguments_json


def signature(call: ToolCall) -> Signature:
    """What a call is compared by: its tool and its normalized arguments."""
    text = normalized(call.arguments_json, call.arguments)
    if len(text) > DIGEST_OVER:
        text = "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return (call.name, text)


def call_signatures(messages: Sequence[ChatMessage], limit: int = WINDOW) -> list[Signature]:
    """The signatures of the last ``limit`` assistant tool calls, in order."""
    found: list[Signature] = []
    for message in reversed(messages):
        if message.role == "assistant":
            for c in reversed(message.tool_calls):
                found.append(signature(c))
            if len(found) >= limit:
                break
    found.reverse()
    return found[-limit:]


def trailing_pattern(items: Sequence[Signature]) -> tuple[int, int]:
    """(repetitions, size) of the longest-repeating trailing pattern: (1, 1) if nothing repeats.

    Of patterns that repeat equally often the shortest wins: A A A A is A four times, not A A twice."""
    best, best_size = 1, 1
    n = len(items)
    for size in range(1, min(n // 2, MAX_PATTERN) + 1):
        pattern = items[n - size :]
        reps = 1
        while (reps + 1) * size <= n and items[n - (reps + 1) * size : n - reps * size] == pattern:
            reps += 1
        if reps > best:
            best, best_size = reps, size
    return best, best_size


def trailing_repetitions(items: Sequence[Signature]) -> int:
    """How many times the longest-repeating trailing pattern repeats (1 if none)."""
    return trailing_pattern(items)[0]


def repeated_call(items: Sequence[Signature], batch: int, limit: int) -> tuple[int, int] | None:
    """Where a batch of calls reaches the hard stop: (index in the batch, pattern size) of its first call
    that makes the same call, or the same pattern of calls, ``limit`` times in a row; None if none does.

    ``items`` are the signatures of the turn's calls, the batch's ``batch`` calls last. ``limit`` 0 is off."""
    if limit <= 0:
        return None
    start = len(items) - batch
    for i in range(max(0, start), len(items)):
        reps, size = trailing_pattern(items[: i + 1])
        if reps >= limit:
            return i - start, size
    return None
