"""forge-lsp run's files with edit_review = "confirm": each edit shown as a diff on the terminal and asked about.

The same answers as a confirm rule (cli.ask): y applies it, a applies it and every later edit of
the run, anything else rejects it ("the user rejected the edit to app.py", the tool's failure).
Without a terminal nobody can review, and the edit fails saying so: it is never made unreviewed.
"""

from __future__ import annotations

import asyncio
import difflib
import sys
from collections.abc import Callable
from pathlib import Path

from forge_lsp.core.session import Ask, deny_all
from forge_lsp.tools.base import DiskFiles, ToolFailure, for_display, read_regular

CONFIRM = "confirm"
MAX_DIFF_LINES = 200
"""A longer diff is cut on the terminal (the question says how many lines were left out)."""


class TerminalReviewFiles(DiskFiles):
    """The disk, each write and removal first accepted at the terminal when edit_review is "confirm"."""

    def __init__(self, root: Path, ask: Ask, max_bytes: Callable[[], int]) -> None:
        self.root = root
        self.ask = ask
        self.max_bytes = max_bytes
        self.edit_review: Callable[[], str] = lambda: "auto"
        self.accept_all = False

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> None:
        if self.edit_review() == CONFIRM:
            await self._review(path, content, tool)
        await super().write_text(path, content, tool)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        if self.edit_review() == CONFIRM:
            await self._review(path, None, tool)
        await super().delete(path, tool)

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else path.name

    async def _review(self, path: Path, content: str | None, tool: str | None) -> None:
        if self.accept_all:
            return
        rel = self._rel(path)
        old = await asyncio.to_thread(read_regular, path, rel, self.max_bytes()) if path.exists() else None
        lines = list(
            difflib.unified_diff(
                for_display(old or "").splitlines(keepends=True),
                for_display(content or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{rel}" if content is not None else "/dev/null",
            )
        )
        question = f"Apply the edit to {rel} ({tool or 'edit'})?"
        if self.ask is deny_all:  # no terminal: nobody can be asked
            raise ToolFailure(
                f'edit_review is "confirm" and nobody can review the edit to {rel} here (forge-lsp run asks only in a '
                "terminal); nothing was changed",
                rel,
            )
        shown = lines[:MAX_DIFF_LINES]
        text = "".join(line if line.endswith("\n") else line + "\n" for line in shown)
        if len(lines) > MAX_DIFF_LINES:
            text += f"... {len(lines) - MAX_DIFF_LINES} more diff lines\n"
        sys.stderr.write(text)
        answer = await self.ask(tool or "edit", question, None)
        if answer == "always":
            self.accept_all = True
        elif answer != "allow":
            raise ToolFailure(f"the user rejected the edit to {rel}", rel)
