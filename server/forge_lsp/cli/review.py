"""forge-lsp run with edit_review = "confirm": each edit the core asks about (core/edit_review.py) shown as a diff
on the terminal and asked about.

The same answers as a confirm rule (cli.ask): y applies it, a applies it and every later edit of
the run, anything else rejects it ("the user rejected the edit to app.py", the tool's failure).
Without a terminal nobody can review, and the edit fails saying so: it is never made unreviewed.
"""

from __future__ import annotations

import difflib
import sys

from forge_lsp.core.edit_review import answer_review, nobody_reviews
from forge_lsp.core.session import Ask, deny_all
from forge_lsp.domain.questions import EditReviewAsked, Reviewed
from forge_lsp.tools.base import for_display

MAX_DIFF_LINES = 200
"""A longer diff is cut on the terminal (the question says how many lines were left out)."""


def review_at_terminal(asked: EditReviewAsked, ask: Ask) -> None:
    """Answer an edit's review with ask (the terminal's [y/N/a]); deny_all: there is no terminal to ask at."""
    if ask is deny_all:
        nobody_reviews(
            asked,
            f'edit_review is "confirm" and nobody can review the edit to {asked.rel} here (forge-lsp run asks only in a '
            "terminal); nothing was changed",
        )
        return

    async def review(asked: EditReviewAsked) -> Reviewed:
        sys.stderr.write(diff(asked))
        given = await ask(asked.tool or "edit", f"Apply the edit to {asked.rel} ({asked.tool or 'edit'})?", None)
        return Reviewed(given if given in ("allow", "always") else "deny")

    answer_review(asked, review)


def diff(asked: EditReviewAsked) -> str:
    """The edit as a unified diff, cut after MAX_DIFF_LINES lines (saying how many were left out)."""
    rel = asked.rel
    lines = list(
        difflib.unified_diff(
            for_display(asked.old or "").splitlines(keepends=True),
            for_display(asked.new or "").splitlines(keepends=True),
            fromfile=f"a/{rel}" if asked.old is not None else "/dev/null",
            tofile=f"b/{rel}" if asked.new is not None else "/dev/null",
        )
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines[:MAX_DIFF_LINES])
    if len(lines) > MAX_DIFF_LINES:
        text += f"... {len(lines) - MAX_DIFF_LINES} more diff lines\n"
    return text
