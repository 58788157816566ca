"""A turn's failures on workspace files, as the diagnostics on those files.

The transcript gets one Warning per failed call (the contract); a file the tool was working on gets
one Warning per location that counts the failures there (not one stacked per attempt), and, when the
turn is interrupted by the failure limit, the Error where the failures were.
"""

from __future__ import annotations

from lsprotocol import types as t

from forge_lsp.domain.events import Interrupt, MaxToolFailurePerTurnLimitReached, Retry
from forge_lsp.lsp import convert
from forge_lsp.lsp.diagnostics import DiagnosticStore


class FileFailures:
    """One turn's diagnostics on the files its tools failed on (the transcript's are elsewhere)."""

    def __init__(self, store: DiagnosticStore) -> None:
        self.store = store
        self.warnings: dict[tuple[str, int], t.Diagnostic] = {}
        """By (uri, line): the one Warning there, counting its failures."""
        self.errors: dict[str, t.Diagnostic] = {}
        self.last_uri: dict[str, str] = {}
        """By tool: the file its last failure was about."""

    def reset(self) -> None:
        """A new turn: the last turn's go (DiagnosticStore.clear of the source removes them)."""
        self.warnings.clear()
        self.errors.clear()
        self.last_uri.clear()

    def _publish(self, uri: str) -> None:
        found = [d for (u, _), d in sorted(self.warnings.items()) if u == uri]
        if uri in self.errors:
            found.insert(0, self.errors[uri])
        self.store.set(convert.SOURCE, uri, found)

    def retry(self, event: Retry, uri: str, line: int = 0) -> None:
        """A failed call about the file uri: its location's Warning, with the count so far."""
        before = self.warnings.get((uri, line))
        count = (before.data or {}).get("failures", 1) + 1 if before is not None else 1
        self.warnings[(uri, line)] = convert.retry_diagnostic(event, line, count)
        self.last_uri[event.tool] = uri
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
