"""Rows for RELIABILITY.md, gathered by the record_reliability fixture: every row is an assertion that passed.

RELIABILITY.md is written only on request (`python3 -m pytest tests --reliability-report RELIABILITY.md`):
a plain test run leaves the tracked file as it is.
"""

from __future__ import annotations

import time

ROWS: list[tuple[str, str, str]] = []
"""(fault or input, what was tried, what survived)"""

ATTACK = "attack: "
"""Rows whose `what` starts with this go to the Security table."""

COMMAND = "python3 -m pytest tests --reliability-report RELIABILITY.md"


def record(what: str, tried: str, survived: str) -> None:
    """Add one row (call it only after the assertions it stands for have passed)."""
    ROWS.append((what, tried, survived))


def _cell(text: str) -> str:
    # A '|' or a newline inside a cell would break the Markdown table.
    return " ".join(text.replace("|", "\\|").split())


def render_report(rows: list[tuple[str, str, str]], date: str | None = None) -> str:
    """RELIABILITY.md's text: the faults and inputs tried, then the attacks (a Security table)."""
    faults = sorted(r for r in set(rows) if not r[0].startswith(ATTACK))
    attacks = sorted(r for r in set(rows) if r[0].startswith(ATTACK))
    lines = [
        "# Reliability",
        "",
        f"Written by `{COMMAND}` on {date or time.strftime('%Y-%m-%d')}; every row is an assertion that passed.",
        "",
        "| fault or input | what was tried | what survived |",
        "| --- | --- | --- |",
        *(f"| {_cell(a)} | {_cell(b)} | {_cell(c)} |" for a, b, c in faults),
        "",
        "## Security",
        "",
        "Hostile workspaces (a cloned repository is untrusted input): each attack and what came of it.",
        "",
        "| attack | what was tried | outcome |",
        "| --- | --- | --- |",
        *(f"| {_cell(a.removeprefix(ATTACK))} | {_cell(b)} | {_cell(c)} |" for a, b, c in attacks),
        "",
    ]
    if not attacks:
        lines.insert(-1, "| (none recorded in this run) | | |")
    return "\n".join(lines)
