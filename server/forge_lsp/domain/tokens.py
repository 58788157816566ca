"""Token estimates for the wire messages, as Forge makes them when no count is at hand."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

CHARS_PER_TOKEN = 4
"""Forge's approximation: a token is about four characters of text."""


def message_tokens(message: Mapping[str, Any]) -> int:
    """The approximate tokens of one wire message: its text, its tool calls' names and arguments."""
    chars = 0
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    elif content is not None:
        chars += len(json.dumps(content))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {} if isinstance(call, Mapping) else {}
        chars += len(str(function.get("name", ""))) + len(str(function.get("arguments", "")))
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        chars += len(reasoning)
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """The approximate tokens of a request's messages."""
    return sum(message_tokens(m) for m in messages)
