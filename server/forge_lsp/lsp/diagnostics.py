"""Diagnostics kept per (source, uri), so a new turn clears exactly the last turn's."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types as t

Publish = Callable[[str, list[t.Diagnostic]], None]


class DiagnosticStore:
    """Holds diagnostics by (source, uri) and publishes a uri's union on each change."""

    def __init__(self, publish: Publish) -> None:
        self._publish = publish
        self._items: dict[tuple[str, str], list[t.Diagnostic]] = {}

    def _sync(self, uri: str) -> None:
        merged = [d for (_, u), items in self._items.items() if u == uri for d in items]
        self._publish(uri, merged)

    def add(self, source: str, uri: str, diagnostic: t.Diagnostic) -> None:
        """Add one diagnostic and publish its document."""
        self._items.setdefault((source, uri), []).append(diagnostic)
        self._sync(uri)

    def set(self, source: str, uri: str, diagnostics: list[t.Diagnostic]) -> None:
        """Replace a source's diagnostics on one document."""
        if diagnostics:
            self._items[(source, uri)] = list(diagnostics)
        else:
            self._items.pop((source, uri), None)
        self._sync(uri)

    def clear(self, source: str) -> None:
        """Remove every diagnostic of a source, publishing each document it touched."""
        uris = [u for (s, u) in self._items if s == source]
        for uri in uris:
            del self._items[(source, uri)]
            self._sync(uri)

    def get(self, uri: str) -> list[t.Diagnostic]:
        """The diagnostics now published on a document."""
        return [d for (_, u), items in self._items.items() if u == uri for d in items]
