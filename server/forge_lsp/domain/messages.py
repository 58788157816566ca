"""Conversation messages, tool calls and tool results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for.

    ``arguments_json`` is the model's raw argument text; ``arguments`` is its
    parsed form, or None when the text is not a JSON object (a tool failure).
    """

    id: str
    name: str
    arguments_json: str

    @cached_property
    def arguments(self) -> dict[str, Any] | None:
        """The parsed arguments, or None when they are not a JSON object (parsed once)."""
        try:
            value = json.loads(self.arguments_json or "{}")
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI wire shape."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_json},
        }


TITLE_KEYS = ("command", "file_path", "path", "pattern", "url", "question")
"""The arguments a call of a tool that is not built in (an MCP tool's) is titled by, the first it has."""


def describe(call: ToolCall) -> str:
    """A short title for progress: 'shell: pytest', 'read: src/a.py', by the argument the tool's catalog entry
    names (title_arg)."""
    from forge_lsp.domain import tool_catalog  # (tool_catalog is domain too; imported here to keep messages light)

    args = call.arguments or {}
    facts = tool_catalog.facts(call.name)
    keys = TITLE_KEYS if facts is None else (facts.title_arg,) if facts.title_arg else ()
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return f"{call.name}: {value.strip().splitlines()[0][:80]}"
    return call.name


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call; ``is_error`` marks a failure."""

    call_id: str
    name: str
    output: str
    is_error: bool = False
    path: str | None = None
    """The workspace file the call was about, when it was about one."""


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation history, in the OpenAI chat shape."""

    role: Role
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    """The model's reasoning that came with an assistant message (litellm's reasoning_content)."""

    def to_dict(self) -> dict[str, Any]:
        """The wire shape litellm takes."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatMessage:
        """Rebuild a message from its wire shape (as stored)."""
        calls = tuple(
            ToolCall(
                id=str(c.get("id", "")),
                name=str(c.get("function", {}).get("name", "")),
                arguments_json=str(c.get("function", {}).get("arguments", "")),
            )
            for c in data.get("tool_calls") or ()
        )
        return cls(
            role=data["role"],
            content=data.get("content"),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data["reasoning_content"] if isinstance(data.get("reasoning_content"), str) else None,
        )


UNKNOWN_COST = "unknown"
"""What a cost says when the model is not in litellm's cost map: never a made-up figure."""


@dataclass(frozen=True)
class Usage:
    """Token usage of one model reply (or a sum of them), and its cost.

    ``cost`` is in US dollars from litellm's local cost map, or None when the
    model is not priced there (the wire then says "unknown"); a sum with one
    unknown part is unknown.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = 0.0
    requests: int = 0
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache (Anthropic's cache_creation_input_tokens: dearer than the rest)."""

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            cost,
            self.requests + other.requests,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """The wire shape: {promptTokens, completionTokens, cachedTokens, cost} (cost a number or "unknown"), and
        cacheWriteTokens where some were written to the provider's cache."""
        out: dict[str, Any] = {
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "cachedTokens": self.cached_tokens,
            "cost": UNKNOWN_COST if self.cost is None else round(self.cost, 8),
        }
        if self.cache_write_tokens:
            out["cacheWriteTokens"] = self.cache_write_tokens
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        """Read a stored wire shape back (a missing or bad field counts as 0; a non-number cost as unknown)."""
        if not isinstance(data, dict):
            return cls()

        def num(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

        cost = data.get("cost")
        price = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0 else None
        return cls(num("promptTokens"), num("completionTokens"), num("cachedTokens"), price, 0, num("cacheWriteTokens"))


MAX_REPLY_CHARS = 200_000
"""The most text kept of one assistant message; a model that streams on without end cannot fill memory."""
REPLY_CUT_MARKER = f"\n\n[reply cut: the model's text went past {MAX_REPLY_CHARS} characters; the rest was not kept]"


NO_STREAMING = "noStreaming"
"""Notice code: the server cannot stream while tools are offered; its requests go unstreamed."""
TOOLS_DROPPED = "toolsDropped"
"""Notice code: the server's prompt was far smaller than the tools it was sent (its template dropped them)."""
CONTEXT_FIXED = "contextFixed"
"""Notice code: the system prompt and tools alone fill over a quarter of the context window."""
REPLY_CUT = "replyCut"
"""Notice code: a reply stopped at the token limit (finish_reason "length")."""


@dataclass(frozen=True)
class Notice:
    """Something about the model or its server a user should know and can act on (a modelNotice event)."""

    code: str
    """What it is about: noStreaming, toolsDropped, contextFixed, replyCut (llm/local_servers.py)."""
    message: str
    level: str = "warning"
    """"warning": shown to the user; "info": logged (forge-lsp adapted and nothing is lost)."""


@dataclass(frozen=True)
class AssistantReply:
    """What the model answered to one request."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    reasoning: str | None = None
    """The model's reasoning (litellm's reasoning_content), at most MAX_REPLY_CHARS."""
    notices: tuple[Notice, ...] = ()
    """What the request showed about the model's server that the user should know (each said once)."""

    @property
    def cut(self) -> bool:
        """The reply stopped at the token limit (finish_reason "length"): its text or a tool call is incomplete."""
        return self.finish_reason == "length"

    def to_message(self) -> ChatMessage:
        """The assistant message to append to the history."""
        return ChatMessage(role="assistant", content=self.text or None, tool_calls=self.tool_calls, reasoning=self.reasoning)

    def capped(self) -> AssistantReply:
        """This reply with its text cut at MAX_REPLY_CHARS, the cut marked."""
        if len(self.text) <= MAX_REPLY_CHARS:
            return self
        return replace(self, text=self.text[:MAX_REPLY_CHARS] + REPLY_CUT_MARKER)


@dataclass(frozen=True)
class Compaction:
    """History messages start..end (inclusive, indexes into the conversation's history) are sent as ``summary``."""

    start: int
    end: int
    summary: str
