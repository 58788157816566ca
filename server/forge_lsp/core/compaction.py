"""Forge's compaction, deterministic and in one place: when to compact, what, the summary, the record.

No model call: an eviction range (never splitting a tool call from its result)
is replaced by one user message rendered from forge-partial-summary-frame.md.
This changes only what the model is sent; the state database keeps every
message, and a Compaction row says which history range its summary stands for,
so the same view is rebuilt on every turn. The orchestrator runs a Compactor
before each model request (when a [compact] threshold is reached) and the
runtime for forge.compact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from forge_lsp.domain import tool_catalog
from forge_lsp.domain.config import CompactConfig
from forge_lsp.domain.messages import ChatMessage, Compaction
from forge_lsp.domain.ports import HistoryPort, TemplatePort
from forge_lsp.domain.template_names import SUMMARY_FRAME
from forge_lsp.domain.tokens import CHARS_PER_TOKEN, estimate_tokens, message_tokens

Wire = Mapping[str, Any]
ROLES = {"user": "User", "assistant": "Assistant", "system": "System"}
TOOL_ERROR_PREFIX = "<tool_call_error>"
SUMMARY_TOOLS = get_args(tool_catalog.SummaryTool)
"""The keys of a summary's tool call (Forge's SummaryTool): each call shows one, the others are null."""


def _has_tool_call(m: Wire) -> bool:
    return m.get("role") == "assistant" and bool(m.get("tool_calls"))


def _is_tool_result(m: Wire) -> bool:
    return m.get("role") == "tool"


WINDOW_SHARE = 0.75
"""With the model's context window known, what is sent is compacted before it passes this share of the window
(the tool definitions counted in): the contextWarning comes at 0.8, and the reply needs room too."""


def window_threshold(window: int, fixed_tokens: int) -> int:
    """The token_threshold a context window sets for the messages, when the tools take fixed_tokens of it."""
    return max(int(window * WINDOW_SHARE) - fixed_tokens, window // 8)


def should_compact(config: CompactConfig, messages: Sequence[Wire], tokens: int) -> bool:
    """Forge's triggers: tokens, turns (user messages), messages, or (on_turn_end) a last message from the user."""
    return over_threshold(config, messages, tokens) or (
        config.on_turn_end and bool(messages) and messages[-1].get("role") == "user"
    )


def over_threshold(config: CompactConfig, messages: Sequence[Wire], tokens: int, share: float = 1.0) -> bool:
    """A count threshold (tokens, turns, messages) is reached; 0 turns one off.

    share: of each threshold (low_water(): the level a compaction brings what is sent down to)."""
    if config.token_threshold and tokens >= config.token_threshold * share:
        return True
    if config.turn_threshold and sum(1 for m in messages if m.get("role") == "user") >= config.turn_threshold * share:
        return True
    return bool(config.message_threshold and len(messages) >= config.message_threshold * share)


def low_water(config: CompactConfig) -> float:
    """The share of each threshold a compaction aims under: 1 - eviction_window (0.8 by default).

    Hysteresis: brought just under the threshold, the next request would pass it again and compact
    again, each request paying for a compaction; under this, the requests after it have room to grow."""
    return 1.0 - min(max(config.eviction_window, 0.0), 1.0)


def eviction_retention(messages: Sequence[Wire], share: float) -> int:
    """How many of the last messages to keep so that at most ``share`` of the tokens is summarized."""
    share = min(max(share, 0.0), 1.0)
    budget = math.ceil(share * estimate_tokens(messages))
    evictable = 0
    for i, m in enumerate(messages):
        if m.get("role") == "system":
            continue
        cost = message_tokens(m)
        if cost > budget:
            break
        budget -= cost
        evictable = i + 1
    return len(messages) - evictable


def sequence_preserving_last(messages: Sequence[Wire], retain: int) -> tuple[int, int] | None:
    """Forge's eviction range: from the first assistant message up to the last that may go while
    ``retain`` messages stay; a tool call and its results are never split. None: nothing to compact."""
    length = len(messages)
    start = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
    if start is None or retain >= length:
        return None
    end = length - retain - 1
    if start > end:
        return None
    if _has_tool_call(messages[end]):
        # The results follow the call: the call stays with them.
        return None if end == start else (start, end - 1)
    if _is_tool_result(messages[end]) and end + 1 < length and _is_tool_result(messages[end + 1]):
        # A batch's results would be split: the whole batch (and its call) stays.
        while end >= start and _is_tool_result(messages[end]):
            end -= 1
        end -= 1
    return (start, end) if end >= start else None


def eviction_range(config: CompactConfig, messages: Sequence[Wire], *, whole: bool = False) -> tuple[int, int] | None:
    """The range to summarize: the more conservative of eviction_window and retention_window
    (``whole``, as forge.compact does: retention_window alone)."""
    retain = config.retention_window
    if not whole:
        retain = max(retain, eviction_retention(messages, config.eviction_window))
    return sequence_preserving_last(messages, retain)


def _tool(name: str, args: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A tool call as the summary frame shows it (Forge's SummaryTool), or None when the frame shows nothing of it."""
    a = args or {}

    def text(key: str) -> str:
        value = a.get(key)
        return value if isinstance(value, str) else ""

    facts = tool_catalog.facts(name)  # what it shows, and which argument, are the tool's catalog entry
    if facts is None or facts.summary_tool is None:
        return None
    shown, path, title = facts.summary_tool, text(facts.path_arg or ""), text(facts.title_arg or "")
    if shown in ("file_read", "file_update", "file_remove"):
        return {shown: {"path": path}}
    if shown == "search":
        return {"search": {"pattern": title}} if title else None
    if shown == "shell":
        return {"shell": {"command": title}}
    todos = a.get("todos")  # todo_write
    items = [
        {"content": str(t.get("content", "")), "status": str(t.get("status", ""))}
        for t in (todos if isinstance(todos, list) else [])
        if isinstance(t, Mapping)
    ]
    return {"todo_write": {"todos": items}}


def summary_data(messages: Sequence[ChatMessage]) -> dict[str, Any]:
    """The summary frame's data, as Forge's ContextSummary: consecutive messages of one role in one
    block, each text and each tool call it shows; tool results only mark their call's success."""
    failed = {m.tool_call_id for m in messages if m.role == "tool" and (m.content or "").startswith(TOOL_ERROR_PREFIX)}
    blocks: list[dict[str, Any]] = []
    role = ""
    for m in messages:
        if m.role in ("system", "tool"):
            continue
        contents: list[dict[str, Any]] = []
        if m.content:
            contents.append({"text": m.content, "tool_call": None})
        for call in m.tool_calls:
            tool = _tool(call.name, call.arguments)
            if tool is not None:
                full = {k: tool.get(k) for k in SUMMARY_TOOLS}
                contents.append({"text": None, "tool_call": {"id": call.id, "tool": full, "is_success": call.id not in failed}})
        if m.role != role or not blocks:
            if not contents:
                continue
            blocks.append({"role": ROLES.get(m.role, m.role), "contents": contents})
            role = m.role
        else:
            blocks[-1]["contents"].extend(contents)
    return {"messages": blocks}


def fit_summary(data: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """The data cut to about max_tokens: the oldest blocks go first; one block left too long has its texts cut."""
    blocks = list(data["messages"])
    budget = max_tokens * CHARS_PER_TOKEN

    def size(block: dict[str, Any]) -> int:
        return sum(len(str(c)) for c in block["contents"])

    # The newest blocks that fit (at least one), counted once each from the end.
    kept, used = 0, 0
    for block in reversed(blocks):
        used += size(block)
        if kept and used > budget:
            break
        kept += 1
    blocks = blocks[len(blocks) - kept :]
    if blocks and sum(map(size, blocks)) > budget:
        only = blocks[0]
        room = max(budget // max(len(only["contents"]), 1), 80)
        contents = [{**c, "text": c["text"][-room:]} if isinstance(c.get("text"), str) else c for c in only["contents"]]
        blocks = [{**only, "contents": contents}]
    return {"messages": blocks}


def valid(compactions: Sequence[Compaction], length: int) -> list[Compaction]:
    """The compactions in force, by start: taken in the order they were made, a later one that
    covers earlier ones replaces them (summaries merge, as Forge's do, instead of piling up); one
    outside the history or partly over another (a hand-edited state file) is dropped."""
    kept: list[Compaction] = []
    for c in compactions:
        if not 0 <= c.start <= c.end < length:
            continue
        inside = [k for k in kept if c.start <= k.start and k.end <= c.end]
        if any(k not in inside and k.start <= c.end and c.start <= k.end for k in kept):
            continue
        kept = [k for k in kept if k not in inside] + [c]
    return sorted(kept, key=lambda c: c.start)


def merged_start(compactions: Sequence[Compaction], start: int) -> int:
    """Where a new compaction whose range begins at ``start`` begins once it takes in the summary
    before it: one summary frame stands for everything older, re-rendered from the messages."""
    before = [c.start for c in compactions if c.end < start]
    return min(before) if before else start


def view(history: Sequence[ChatMessage], compactions: Sequence[Compaction]) -> tuple[list[ChatMessage], list[int | None]]:
    """What the model is sent of a history: each compacted range as its summary (a user message).

    Returns the messages and, for each, its history index (None for a summary). The last
    reasoning of a compacted range goes on the first assistant message after it that has none
    (Forge keeps the reasoning chain, without letting it grow).
    """
    out: list[ChatMessage] = []
    origin: list[int | None] = []
    carry: str | None = None
    by_start = {c.start: c for c in valid(compactions, len(history))}
    i = 0
    while i < len(history):
        c = by_start.get(i)
        if c is not None:
            out.append(ChatMessage("user", c.summary))
            origin.append(None)
            carry = next((m.reasoning for m in reversed(history[c.start : c.end + 1]) if m.reasoning), None) or carry
            i = c.end + 1
            continue
        m = history[i]
        if carry is not None and m.role == "assistant":
            if not m.reasoning:
                m = ChatMessage(m.role, m.content, m.tool_calls, m.tool_call_id, m.name, carry)
            carry = None
        out.append(m)
        origin.append(i)
        i += 1
    return out, origin


@dataclass(frozen=True)
class CompactResult:
    """What one compaction did: the tokens sent before and after, and how many messages the summaries replaced."""

    before_tokens: int
    after_tokens: int
    messages: int
    compactions: list[Compaction]
    wire: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """forge.compact's result and the compacted event's fields."""
        return {"beforeTokens": self.before_tokens, "afterTokens": self.after_tokens, "messages": self.messages}


def build_wire(
    prefix: Sequence[dict[str, Any]],
    history: Sequence[ChatMessage],
    compactions: Sequence[Compaction],
    context: str = "",
) -> list[dict[str, Any]]:
    """The messages a request sends: the prefix (system prompt), then the history as compacted, its first
    message opened by the workspace's context (system information, AGENTS.md)."""
    messages, _ = view(history, compactions)
    return with_context([*prefix, *(m.to_dict() for m in messages)], len(prefix), context)


def with_context(wire: list[dict[str, Any]], at: int, context: str, insert: bool = True) -> list[dict[str, Any]]:
    """The wire with the workspace's context before the text of its first message after the prefix (the first
    prompt, or the summary that stands for it). It goes into that user message, not one of its own: some chat
    templates (Gemma's, Mistral's) refuse two user messages in a row. The stored history never holds it, so
    it is as the workspace is now (the date, AGENTS.md) on every turn. Without a user message there, it is
    one of its own (unless not ``insert``: a view whose indexes must stay those of the history)."""
    if not context:
        return wire
    first = wire[at] if at < len(wire) else None
    if first is not None and first.get("role") == "user" and isinstance(first.get("content"), str):
        wire[at] = {**first, "content": f"{context}\n\n{first['content']}"}
    elif insert:
        wire.insert(at, {"role": "user", "content": context})
    return wire


class Compactor:
    """Summarizes the oldest part of what the model is sent, as Forge's Compactor does."""

    def __init__(self, config: CompactConfig, templates: TemplatePort, store: HistoryPort) -> None:
        self.config = config
        self.templates = templates
        self.store = store

    def summarize(self, messages: Sequence[ChatMessage]) -> str:
        """The summary frame for these messages, cut to max_tokens."""
        data = fit_summary(summary_data(messages), self.config.max_tokens)
        return self.templates.render(SUMMARY_FRAME, data)

    def run(
        self,
        conversation_id: str,
        prefix: Sequence[dict[str, Any]],
        history: Sequence[ChatMessage],
        compactions: Sequence[Compaction],
        *,
        force: bool = False,
        wire: list[dict[str, Any]] | None = None,
        context: str = "",
    ) -> CompactResult | None:
        """Compact when a trigger says so (``force``: at once, retention_window alone, as forge.compact);
        None when nothing was compacted (``wire``: the current request's messages, when the caller has
        them, so that the check costs no rebuild). A pass (eviction_window) that leaves what is sent over
        low_water() of a threshold is followed by one that keeps only retention_window, so the next requests
        have room under the threshold when they can."""
        c = self.config
        if not force and not (c.token_threshold or c.turn_threshold or c.message_threshold or c.on_turn_end):
            return None  # every trigger off: nothing to count
        done = list(valid(compactions, len(history)))
        if wire is None:  # the caller's wire, when given, is this same view already built
            wire = build_wire(prefix, history, done, context)
        before = estimate_tokens(wire)
        if not force and not should_compact(self.config, wire, before):
            return None
        replaced = 0
        for whole in (True,) if force else (False, True):
            messages, origin = view(history, done)
            offset = len(prefix)
            view_wire = with_context([*prefix, *(m.to_dict() for m in messages)], offset, context, insert=False)
            found = eviction_range(self.config, view_wire, whole=whole)
            if found is not None:
                start, end = found
                first, last = origin[start - offset] if start >= offset else None, origin[end - offset]
                if first is not None and last is not None and last >= first:
                    first = merged_start(done, first)
                    item = Compaction(first, last, self.summarize(history[first : last + 1]))
                    trial = valid([*done, item], len(history))
                    trial_wire = build_wire(prefix, history, trial, context)
                    # A summary no smaller than what it stands for (a few short messages) is not made.
                    if estimate_tokens(trial_wire) < estimate_tokens(wire):
                        self.store.add_compaction(conversation_id, item)
                        replaced += sum(c.end - c.start + 1 for c in trial) - sum(c.end - c.start + 1 for c in done)
                        done = trial
            wire = build_wire(prefix, history, done, context)
            if force or not over_threshold(self.config, wire, estimate_tokens(wire), low_water(self.config)):
                break
        if not replaced:
            return None
        return CompactResult(before, estimate_tokens(wire), replaced, done, wire)
