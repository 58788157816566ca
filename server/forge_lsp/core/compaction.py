"""Compaction over a conversation: Forge's deterministic summary, recorded, never a model call.

The orchestrator calls it before each model request (when a [compact]
threshold is reached) and the runtime for forge.compact. The messages stay in
the state database; a compaction row says which of them its summary stands for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from forge_lsp.domain import compact
from forge_lsp.domain.compact import Compaction
from forge_lsp.domain.config import CompactConfig
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.domain.ports import HistoryPort, TemplatePort
from forge_lsp.domain.template_names import SUMMARY_FRAME
from forge_lsp.domain.tokens import estimate_tokens


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
    prefix: Sequence[dict[str, Any]], history: Sequence[ChatMessage], compactions: Sequence[Compaction]
) -> list[dict[str, Any]]:
    """The messages a request sends: the prefix (system prompt), then the history as compacted."""
    messages, _ = compact.view(history, compactions)
    return [*prefix, *(m.to_dict() for m in messages)]


class Compactor:
    """Summarizes the oldest part of what the model is sent, as Forge's Compactor does."""

    def __init__(self, config: CompactConfig, templates: TemplatePort, store: HistoryPort) -> None:
        self.config = config
        self.templates = templates
        self.store = store

    def summarize(self, messages: Sequence[ChatMessage]) -> str:
        """The summary frame for these messages, cut to max_tokens."""
        data = compact.fit_summary(compact.summary_data(messages), self.config.max_tokens)
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
    ) -> CompactResult | None:
        """Compact when a trigger says so (``force``: at once, retention_window alone, as forge.compact);
        None when nothing was compacted (``wire``: the current request's messages, when the caller has
        them, so that the check costs no rebuild). A pass that leaves a threshold still reached is followed by
        one that keeps only retention_window, so the next request is under it when it can be."""
        c = self.config
        if not force and not (c.token_threshold or c.turn_threshold or c.message_threshold or c.on_turn_end):
            return None  # every trigger off: nothing to count
        done = list(compact.valid(compactions, len(history)))
        if wire is None:  # the caller's wire, when given, is this same view already built
            wire = build_wire(prefix, history, done)
        before = estimate_tokens(wire)
        if not force and not compact.should_compact(self.config, wire, before):
            return None
        replaced = 0
        for whole in (True,) if force else (False, True):
            messages, origin = compact.view(history, done)
            offset = len(prefix)
            view_wire = [*prefix, *(m.to_dict() for m in messages)]
            found = compact.eviction_range(self.config, view_wire, whole=whole)
            if found is not None:
                start, end = found
                first, last = origin[start - offset] if start >= offset else None, origin[end - offset]
                if first is not None and last is not None and last >= first:
                    first = compact.merged_start(done, first)
                    item = Compaction(first, last, self.summarize(history[first : last + 1]))
                    trial = compact.valid([*done, item], len(history))
                    trial_wire = build_wire(prefix, history, trial)
                    # A summary no smaller than what it stands for (a few short messages) is not made.
                    if estimate_tokens(trial_wire) < estimate_tokens(wire):
                        self.store.add_compaction(conversation_id, item)
                        replaced += sum(c.end - c.start + 1 for c in trial) - sum(c.end - c.start + 1 for c in done)
                        done = trial
            wire = build_wire(prefix, history, done)
            if force or not compact.over_threshold(self.config, wire, estimate_tokens(wire)):
                break
        if not replaced:
            return None
        return CompactResult(before, estimate_tokens(wire), replaced, done, wire)
