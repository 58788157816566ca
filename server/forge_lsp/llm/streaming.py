"""A model's reply as litellm hands it over: a stream of chunks (text, reasoning, tool-call pieces, usage) or,
for a server that cannot stream with tools, one whole response; both end as the same Collected reply."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from forge_lsp.domain import retry
from forge_lsp.domain.messages import MAX_REPLY_CHARS, AssistantReply, Notice, ToolCall, Usage
from forge_lsp.domain.retry import ModelError


def read_usage(u: Any) -> Usage:
    """A litellm usage object as Usage (cost not yet set): cached tokens from prompt_tokens_details."""

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    details = getattr(u, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if not cached:
        cached = getattr(u, "cache_read_input_tokens", None)
    written = getattr(u, "cache_creation_input_tokens", None)
    prompt, completion = count(getattr(u, "prompt_tokens", 0)), count(getattr(u, "completion_tokens", 0))
    return Usage(prompt, completion, count(cached), cache_write_tokens=count(written))


@dataclass
class Collected:
    """A reply's pieces as they arrive, bounded: text and reasoning to MAX_REPLY_CHARS (one character past it
    kept, so that the orchestrator sees the cut), tool calls by index, the finish reason and the usage."""

    on_text: Callable[[str], None]
    on_reasoning: Callable[[str], None] | None = None
    text: list[str] = field(default_factory=list)
    kept: int = 0
    thought: list[str] = field(default_factory=list)
    thought_kept: int = 0
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None

    def add_reasoning(self, piece: Any) -> None:
        if isinstance(piece, str) and piece and self.thought_kept < MAX_REPLY_CHARS:
            self.thought.append(piece[: MAX_REPLY_CHARS - self.thought_kept])
            self.thought_kept += len(self.thought[-1])
            if self.on_reasoning is not None:
                self.on_reasoning(self.thought[-1])

    def add_text(self, piece: Any) -> None:
        if isinstance(piece, str) and piece:
            if self.kept <= MAX_REPLY_CHARS:
                self.text.append(piece[: MAX_REPLY_CHARS + 1 - self.kept])
                self.kept += len(self.text[-1])
            self.on_text(piece)

    def add_call(self, index: int, call_id: str | None, name: str | None, arguments: str | None) -> None:
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        slot["id"] = call_id or slot["id"]
        if name and not slot["name"]:
            slot["name"] = name
        slot["arguments"] += arguments or ""

    def reply(self, cost: Callable[[Usage], float | None], notices: tuple[Notice, ...] = ()) -> AssistantReply:
        """The reply (its usage priced); ModelError for one with neither text nor a tool call."""
        tool_calls = tuple(
            ToolCall(id=c["id"] or f"call_{uuid.uuid4().hex[:16]}", name=c["name"], arguments_json=c["arguments"])
            for _, c in sorted(self.calls.items())
        )
        text = "".join(self.text)
        if not text.strip() and not tool_calls:
            if self.finish == "length":  # cut before it said anything: a retry would be cut the same way
                raise ModelError(
                    "the model's reply was cut at the token limit before any text or tool call (finish_reason "
                    '"length"): raise max_tokens, or the server\'s own limit (llama-server -n, Ollama num_predict)',
                    retryable=False,
                    kind=retry.OTHER,
                )
            raise ModelError("the model sent an empty reply", retryable=True, kind=retry.EMPTY)
        # No usage reported by the provider: the tokens are not known, nor is the cost.
        usage = Usage(cost=None, requests=1) if self.usage is None else replace(self.usage, cost=cost(self.usage), requests=1)
        return AssistantReply(text, tool_calls, self.finish, usage, "".join(self.thought) or None, notices)


async def read_stream(stream: AsyncIterator[Any], into: Collected) -> None:
    """Every chunk of a streamed reply into ``into`` (text and reasoning passed on as they come)."""
    async for chunk in stream:
        if getattr(chunk, "usage", None):
            into.usage = read_usage(chunk.usage)
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        into.finish = choice.finish_reason or into.finish
        delta = choice.delta
        into.add_reasoning(getattr(delta, "reasoning_content", None))
        into.add_text(delta.content)
        for tc in delta.tool_calls or ():
            function = tc.function
            into.add_call(
                tc.index or 0,
                tc.id,
                function.name if function is not None else None,
                function.arguments if function is not None else None,
            )


def read_whole(response: Any, into: Collected) -> None:
    """An unstreamed response into ``into``: its text and reasoning passed on in one piece each."""
    if getattr(response, "usage", None):
        into.usage = read_usage(response.usage)
    if not response.choices:
        return
    choice = response.choices[0]
    into.finish = choice.finish_reason
    message = choice.message
    into.add_reasoning(getattr(message, "reasoning_content", None))
    into.add_text(message.content)
    for i, tc in enumerate(getattr(message, "tool_calls", None) or ()):
        function = tc.function
        into.add_call(i, tc.id, getattr(function, "name", None), getattr(function, "arguments", None))
