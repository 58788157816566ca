"""Rows for RELIABILITY.md, gathered by the record_reliability fixture: every row is an assertion that passed."""

from __future__ import annotations

ROWS: list[tuple[str, str, str]] = []
"""(fault or input, what was tried, what survived)"""


def record(what: str, tried: str, survived: str) -> None:
    """Add one row (call it only after the assertions it stands for have passed)."""
    ROWS.append((what, tried, survived))
