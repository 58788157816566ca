"""Per-turn counting of tool failures, as Forge's ToolErrorTracker does it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from forge_lsp.domain.messages import ToolResult


@dataclass
class ToolErrorTracker:
    """Counts consecutive failing batches per tool within one turn.

    A tool that fails at least once in a batch counts once for that batch; a
    tool that only succeeded in a batch is cleared. A tool whose count reaches
    its limit maxes out, which interrupts the turn.
    """

    limit: int
    per_tool_limits: Mapping[str, int] = field(default_factory=dict)
    _errors: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def adjust_record(self, batch: Iterable[ToolResult]) -> None:
        """Record one batch of tool results (one model response's tool calls)."""
        failed: set[str] = set()
        succeeded: set[str] = set()
        for result in batch:
            (failed if result.is_error else succeeded).add(result.name)
        self.adjust(failed, succeeded)

    def adjust(self, failed: Iterable[str], succeeded: Iterable[str]) -> None:
        """Count each failed tool once; clear tools that only succeeded."""
        failed_set = set(failed)
        for name in failed_set:
            self._errors[name] = self._errors.get(name, 0) + 1
        # Success evidence clears a tool only when it did not also fail in the
        # same batch: parallel reads where one fails must still count.
        for name in set(succeeded) - failed_set:
            self._errors.pop(name, None)

    def limit_for(self, name: str) -> int:
        """The failure limit for one tool: its own override, else the longest glob naming it ("mcp_github_*"), else the turn's."""
        key = self.limit_key(name)
        return self.per_tool_limits[key] if key is not None else self.limit

    def limit_key(self, name: str) -> str | None:
        """The per_tool_limits key that sets the tool's limit (its name or a glob), or None (the turn's limit)."""
        if name in self.per_tool_limits:
            return name
        globs = [p for p in self.per_tool_limits if any(c in p for c in "*?[") and fnmatchcase(name, p)]
        return max(globs, key=lambda p: (len(p), p)) if globs else None

    def error_count(self, name: str) -> int:
        """How many consecutive failing batches the tool has now."""
        return self._errors.get(name, 0)

    def remaining_attempts(self, name: str) -> int:
        """Attempts left before the tool maxes out, never negative."""
        return max(0, self.limit_for(name) - self.error_count(name))

    def maxed_out_tools(self) -> list[str]:
        """Names of the tools whose count reached their limit, sorted."""
        return sorted(n for n, c in self._errors.items() if c >= self.limit_for(n))

    def limit_reached(self) -> bool:
        """True when any tool reached its limit."""
        return bool(self.maxed_out_tools())

    def errors(self) -> dict[str, int]:
        """A copy of the failure counts, by tool name."""
        return dict(self._errors)
