"""The editor's diagnostics after each edit (issue 37 section 1): a call that changed a file is followed by what
the editor's own language servers then report on it, and the model reads the new problems in that call's result.

For each file a call of a file tool changes (write, patch, multi_patch, remove, undo: the catalog's tools that
change the file their path names; an edit accepted in review is one of them), the frontend's DiagnosticsPort is
asked before the turn's first edit of the file (what it had then) and after each edit (once the language servers
caught up, at most [verify] wait_ms). A problem is new when the file has more of it (source, code, message) than
before the turn's first edit of it: new anywhere in the turn, not fixed yet. [verify] diagnostics = "report" adds
them to the call's result; "fail" makes the call a failed one too (the edit stays: counted by the tracker, with
the retry notice, as any failure); "off" asks nothing. The turn's end carries what is left (TurnSummary.problems).

Only the language server has an editor: ACP and the CLI give no port, and nothing is checked there. An editor that
does not answer the request is said once (the port's unavailable(), in the log and forge.status).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from forge_lsp.domain import tool_catalog
from forge_lsp.domain.config import VerifyConfig
from forge_lsp.domain.events import EditorProblems, Event
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.domain.problems import EditorReport, ProblemsLeft, TurnProblems, counts, for_model
from forge_lsp.tools.workspace import PathOutsideWorkspace, Workspace

log = logging.getLogger(__name__)

FORGE_SOURCE = "forge"
"""forge-lsp's own diagnostics (a failed call's Warning on its file) are never the editor's problems."""
FIXED = "The editor no longer reports the new problems this turn's edits made in {path}."

Call = Callable[[], Awaitable[tuple[ToolResult, bool]]]


class DiagnosticsPort(Protocol):
    """The editor's own diagnostics of a workspace file (its language servers', never forge's), as the frontend that
    has an editor gets them (the language server: forge/diagnostics); ACP and the CLI have none."""

    def unavailable(self) -> str | None:
        """Why this editor cannot give them (None: it can)."""
        ...

    async def diagnostics(self, path: Path, wait_ms: int, *, edited: bool) -> EditorReport | None:
        """The file's problems (every severity). edited False (before an edit): what the editor has now, a file it had
        not open opened first and its language servers' first report awaited; True: once they caught up with the
        edit. Either way at most wait_ms. None when the editor gave no answer."""
        ...


class EditChecks:
    """One turn's checks of its edits against the editor's diagnostics; the files' state before the turn's first edit
    of each, and the new problems each has now."""

    def __init__(self, port: DiagnosticsPort, config: VerifyConfig, workspace: Workspace, turn_id: str) -> None:
        self.port = port
        self.config = config
        self.workspace = workspace
        self.turn_id = turn_id
        self.emit: Callable[[Event], None] = lambda event: None
        """Where the checks' events go (the turn's, set once it has them)."""
        self.problems = TurnProblems()
        self._unknown: set[str] = set()
        """Files whose state before the turn's first edit the editor did not give: not checked this turn."""

    def target(self, call: ToolCall) -> Path | None:
        """The workspace file a call changes, where its tool is a file tool; None for any other call."""
        facts = tool_catalog.facts(call.name)
        if facts is None or not facts.changes_files or facts.path_arg is None or not isinstance(call.arguments, dict):
            return None
        raw = call.arguments.get(facts.path_arg)
        if not isinstance(raw, str) or not raw:
            return None
        try:
            return self.workspace.resolve(raw)
        except (PathOutsideWorkspace, OSError, ValueError):
            return None  # the tool refuses it itself

    def active(self) -> bool:
        return self.config.diagnostics != "off" and self.port.unavailable() is None

    async def run(self, call: ToolCall, run_call: Call) -> tuple[ToolResult, bool]:
        """Run the call; when it changed a file, its result with what the editor reports."""
        path = self.target(call) if self.active() else None
        if path is None:
            return await run_call()
        rel = self.workspace.relative(path)
        if not self.problems.knows(rel) and rel not in self._unknown:
            await self._before(path, rel)
        result, stop = await run_call()
        if result.is_error or rel in self._unknown:
            return result, stop  # nothing changed (a failed call changes nothing), or nothing to compare with
        return await self._after(call, path, rel, result), stop

    async def _before(self, path: Path, rel: str) -> None:
        if not path.is_file():
            self.problems.start(rel, [])  # a new file (a folder: the tool refuses it) had no problem
            return
        report = await self._ask(path, rel, edited=False)
        if report is None:
            self._unknown.add(rel)
            log.info("%s: the editor gave no diagnostics before the edit: its edits are not checked this turn", rel)
            return
        self.problems.start(rel, [p for p in report.problems if counts(p, self.config.severity)])

    async def _after(self, call: ToolCall, path: Path, rel: str, result: ToolResult) -> ToolResult:
        had = bool(self.problems.new.get(rel))
        if not path.is_file():
            self.problems.update(rel, None)  # removed: it has no problem left
            return result
        started = time.perf_counter()
        report = await self._ask(path, rel, edited=True)
        waited = int((time.perf_counter() - started) * 1000)
        if report is None:
            return result
        new = self.problems.update(rel, [p for p in report.problems if counts(p, self.config.severity)])
        failed = bool(new) and self.config.diagnostics == "fail"
        self.emit(EditorProblems(self.turn_id, call.name, call.id, rel, tuple(new), waited, report.caught_up, failed))
        if not new:
            return replace(result, output=f"{result.output}\n\n{FIXED.format(path=rel)}") if had else result
        output = f"{result.output}\n\n{for_model(new, failed)}"
        return ToolResult(result.call_id, result.name, output, failed, result.path or rel)

    async def _ask(self, path: Path, rel: str, *, edited: bool) -> EditorReport | None:
        try:
            report = await self.port.diagnostics(path, self.config.wait_ms, edited=edited)
        except Exception:  # the editor's answer is a nicety of the call: a bad one never fails the turn
            log.exception("%s: asking the editor for its diagnostics", rel)
            return None
        if report is None:
            return None
        return replace(report, problems=tuple(p for p in report.problems if p.source != FORGE_SOURCE))

    def left(self) -> ProblemsLeft | None:
        """The new problems the turn leaves (TurnSummary.problems)."""
        return self.problems.left()
