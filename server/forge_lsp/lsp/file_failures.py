"""A turn's failures on workspace files, as the diagnostics on those files.

The transcript gets one Warning per failed call (the contract); a file the tool was working on gets
one Warning per location that counts the failures there (not one stacked per attempt), and, when the
turn is interrupted by the failure limit, the Error where the failures were. A failure that a later
call of the turn made good (the same tool, or an edit of the file, succeeded on it) leaves the file:
the problem is gone, and the transcript still tells it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as t

from forge_lsp.domain.events import Interrupt, MaxToolFailurePerTurnLimitReached, Retry, ToolCallFinished
from forge_lsp.domain.tool_catalog import kind_of
from forge_lsp.lsp import convert
from forge_lsp.lsp.diagnostics import DiagnosticStore


@dataclass(frozen=True)
class _Failure:
    order: int
    """When its call ended, among the turn's calls."""
    line: int
    event: Retry


def _makes_good(success_tool: str, failed_tool: str) -> bool:
    """Whether a call of success_tool that succeeded on a file undoes a failure of failed_tool there: the same
    tool did what failed, or the file was edited (a failed read, then a write, is not a problem of the file)."""
    return success_tool == failed_tool or kind_of(success_tool) == "edit"  # the tools whose success rewrote the file


class FileFailures:
    """One turn's diagnostics on the files its tools failed on (the transcript's are elsewhere)."""

    def __init__(self, store: DiagnosticStore) -> None:
        self.store = store
        self.failures: dict[str, list[_Failure]] = {}
        """By uri: the failures there that no later call made good, in order."""
        self.successes: dict[str, list[tuple[int, str]]] = {}
        """By uri: (order, tool) of each call that succeeded there."""
        self.ended: dict[str, int] = {}
        """By call id: when the call ended (its Retry comes after the whole batch)."""
        self.errors: dict[str, t.Diagnostic] = {}
        self.last_uri: dict[str, str] = {}
        """By tool: the file its last failure was about."""

    def reset(self) -> None:
        """A new turn: the last turn's go (DiagnosticStore.clear of the source removes them)."""
        self.failures.clear()
        self.successes.clear()
        self.ended.clear()
        self.errors.clear()
        self.last_uri.clear()

    def _publish(self, uri: str) -> None:
        by_line: dict[int, list[_Failure]] = {}
        for failure in self.failures.get(uri, []):
            by_line.setdefault(failure.line, []).append(failure)
        found = [convert.retry_diagnostic(fs[-1].event, line, len(fs)) for line, fs in sorted(by_line.items())]
        if uri in self.errors:
            found.insert(0, self.errors[uri])
        self.store.set(convert.SOURCE, uri, found)

    def finished(self, event: ToolCallFinished, uri: str | None) -> None:
        """A call ended (about the file uri, if any): a success there makes good the earlier failures it covers."""
        order = len(self.ended)
        self.ended[event.call_id] = order
        if uri is None or not event.ok:
            return
        self.successes.setdefault(uri, []).append((order, event.tool))
        before = self.failures.get(uri, [])
        kept = [f for f in before if not (f.order < order and _makes_good(event.tool, f.event.tool))]
        if len(kept) != len(before):
            self.failures[uri] = kept
            self._publish(uri)

    def retry(self, event: Retry, uri: str, line: int = 0) -> None:
        """A failed call about the file uri: its location's Warning, with the count so far, unless a later call
        of the batch already made it good."""
        self.last_uri[event.tool] = uri
        order = self.ended.get(event.call_id, len(self.ended))
        if any(o > order and _makes_good(tool, event.tool) for o, tool in self.successes.get(uri, [])):
            return
        self.failures.setdefault(uri, []).append(_Failure(order, line, event))
        self._publish(uri)

    def interrupt(self, event: Interrupt) -> None:
        """The failure limit ended the turn: its Error on the file each maxed-out tool last failed on."""
        if not isinstance(event.reason, MaxToolFailurePerTurnLimitReached):
            return
        for tool, count in event.reason.errors.items():
            uri = self.last_uri.get(tool)
            if count and uri is not None:
                self.errors[uri] = convert.interrupt_diagnostic(event, 0)
                self._publish(uri)
