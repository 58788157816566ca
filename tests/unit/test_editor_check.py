"""core/editor_check.py through the orchestrator: the editor's diagnostics after each edit reach the model (issue 37 §1).

The port is a fake editor whose "language server" reads the file on disk: a line holding `undefined_name` is an
error (F821), one holding `# warn` a warning. The real tools make the edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.editor_check import FIXED, EditChecks
from forge_lsp.core.orchestrator import Orchestrator, TurnRequest
from forge_lsp.core.runtime import BoundTools
from forge_lsp.domain.config import ForgeConfig, VerifyConfig
from forge_lsp.domain.events import TurnStatus
from forge_lsp.domain.problems import ERROR, WARNING, EditorReport, Problem
from forge_lsp.state.store import StateStore
from forge_lsp.templates import TemplateEngine
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

from fakes import FakeModel, answer, call, tools


@dataclass
class FakeEditor:
    """A DiagnosticsPort whose language server lints the disk; records each question."""

    root: Path
    asked: list[tuple[str, int, bool]] = field(default_factory=list)
    why_not: str | None = None
    answers: bool = True
    own: bool = False
    """Also report a diagnostic of forge-lsp's own (source "forge"), as an editor might if it did not leave it out."""

    def unavailable(self) -> str | None:
        return self.why_not

    async def diagnostics(self, path: Path, wait_ms: int, *, edited: bool) -> EditorReport | None:
        rel = path.relative_to(self.root).as_posix()
        self.asked.append((rel, wait_ms, edited))
        if not self.answers:
            return None
        problems: list[Problem] = []
        for i, line in enumerate(path.read_text().splitlines()):
            if "undefined_name" in line:
                problems.append(
                    Problem(rel, i, line.index("undefined_name"), ERROR, "Undefined name `undefined_name`", "Ruff", "F821")
                )
            if "# warn" in line:
                problems.append(Problem(rel, i, 0, WARNING, "a warning", "Ruff", "W1"))
        if self.own:
            problems.append(Problem(rel, 0, 0, ERROR, "patch failed", "forge", "tool-retry"))
        return EditorReport(tuple(problems))


@dataclass
class Turn:
    root: Path
    model: FakeModel
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    editor: FakeEditor | None = None
    events: list[Any] = field(default_factory=list)

    async def run(self) -> Any:
        config = replace(ForgeConfig(), verify=self.verify)
        self.editor = self.editor or FakeEditor(self.root)
        bound = BoundTools(ToolRegistry(), ToolContext(Workspace(self.root), config))
        checks = EditChecks(self.editor, config.verify, Workspace(self.root), "t1")
        checks.emit = self.events.append
        bound.checks = checks
        store = StateStore(self.root)
        orchestrator = Orchestrator(config, self.model, bound, TemplateEngine(self.root), store, problems_left=checks.left)
        return await orchestrator.run(TurnRequest("t1", store.current_conversation(), "do it"), self.events.append)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def outputs(self) -> list[str]:
        return [e.output for e in self.of("toolCallFinished")]


def patch(old: str, new: str, i: int = 0) -> Any:
    return tools(call("patch", f"p{i}", file_path="app.py", old_string=old, new_string=new))


APP = "import os\n\nprint(os.name)\n"


async def test_an_edit_that_adds_an_undefined_name_gets_the_problem_into_the_next_request(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    model = FakeModel([patch("print(os.name)", "print(undefined_name)"), answer("done")])
    turn = Turn(workspace, model)
    summary = await turn.run()
    assert summary.status is TurnStatus.COMPLETED and summary.failures == 0
    result = [m for m in model.requests[1] if m["role"] == "tool"][-1]["content"]
    assert result.splitlines() == [
        "Patched app.py: 1 replacement(s)",
        "",
        "The editor reports 1 new problem in app.py (not there before this turn's edits; from its language servers):",
        "app.py:3:7: error Ruff F821: Undefined name `undefined_name`",
        "Fix them unless they are intended.",
    ]
    assert turn.editor is not None and turn.editor.asked == [("app.py", 2000, False), ("app.py", 2000, True)]
    (event,) = turn.of("problems")
    assert event.to_dict()["count"] == 1 and event.to_dict()["problems"][0]["line"] == 3 and not event.failed
    assert summary.to_dict()["problems"] == {"count": 1, "files": [{"path": "app.py", "count": 1}]}
    assert turn.of("turnFinished")[0].to_dict()["problems"] == {"count": 1, "files": [{"path": "app.py", "count": 1}]}


async def test_a_problem_the_file_had_is_not_new_and_the_state_before_is_asked_once_a_turn(workspace: Path) -> None:
    (workspace / "app.py").write_text("x = undefined_name\n" + APP)
    model = FakeModel(
        [patch("import os", "import os\nimport sys", 0), patch("import sys", "import sys  # warn", 1), answer("ok")]
    )
    turn = Turn(workspace, model)
    summary = await turn.run()
    assert "problem" not in "".join(turn.outputs()) and summary.problems is None and "problems" not in summary.to_dict()
    assert turn.editor is not None
    assert [edited for _, _, edited in turn.editor.asked] == [False, True, True]  # one "before" for the turn
    assert [e.problems for e in turn.of("problems")] == [(), ()]  # the warning does not count by default


async def test_warnings_count_with_severity_warning(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    turn = Turn(workspace, FakeModel([patch("import os", "import os  # warn"), answer("ok")]), VerifyConfig(severity="warning"))
    summary = await turn.run()
    assert "app.py:1:1: warning Ruff W1: a warning" in turn.outputs()[0]
    assert summary.problems is not None and summary.problems.count == 1


async def test_fail_mode_gives_the_retry_notice_then_the_fix_clears_it(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    model = FakeModel(
        [patch("print(os.name)", "print(undefined_name)", 0), patch("print(undefined_name)", "print(os.sep)", 1), answer("fixed")]
    )
    turn = Turn(workspace, model, VerifyConfig(diagnostics="fail"))
    summary = await turn.run()
    assert (workspace / "app.py").read_text() == "import os\n\nprint(os.sep)\n"  # the first edit stayed: the fix patched it
    assert summary.status is TurnStatus.COMPLETED and summary.failures == 1 and summary.problems is None
    failed = [m for m in model.requests[1] if m["role"] == "tool"][-1]["content"]
    assert failed.startswith("<tool_call_error><cause>Patched app.py: 1 replacement(s)\n\nThe editor reports 1 new problem")
    assert "counts as failed until they are fixed" in failed and "- **Attempts remaining:** 2" in failed
    (retry,) = turn.of("retry")
    assert (retry.tool, retry.attempts_left, retry.path) == ("patch", 2, "app.py")
    assert turn.of("problems")[0].failed and not turn.of("problems")[1].problems
    assert turn.outputs()[1] == "Patched app.py: 1 replacement(s)\n\n" + FIXED.format(path="app.py")


async def test_fail_mode_repeated_interrupts_as_any_tools_failures(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    model = FakeModel([patch("print(", f"print(undefined_name, {i}, ", i) for i in range(3)] + [answer("never")])
    turn = Turn(workspace, model, VerifyConfig(diagnostics="fail"))
    summary = await turn.run()
    assert summary.status is TurnStatus.INTERRUPTED
    assert summary.to_dict()["reason"] == {"kind": "MaxToolFailurePerTurnLimitReached", "limit": 3, "errors": {"patch": 3}}
    assert summary.to_dict()["problems"] == {"count": 1, "files": [{"path": "app.py", "count": 1}]}  # one line, one problem


async def test_off_asks_nothing_and_adds_no_wait(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    turn = Turn(
        workspace, FakeModel([patch("print(os.name)", "print(undefined_name)"), answer("ok")]), VerifyConfig(diagnostics="off")
    )
    summary = await turn.run()
    assert turn.editor is not None and turn.editor.asked == [] and turn.of("problems") == [] and summary.problems is None
    assert turn.outputs() == ["Patched app.py: 1 replacement(s)"]


@pytest.mark.parametrize("why", ["unavailable", "no answer"])
async def test_an_editor_that_cannot_or_does_not_answer_leaves_the_call_as_it_is(workspace: Path, why: str) -> None:
    (workspace / "app.py").write_text(APP)
    editor = FakeEditor(workspace, why_not="this editor does not answer" if why == "unavailable" else None, answers=False)
    turn = Turn(workspace, FakeModel([patch("print(os.name)", "print(undefined_name)"), answer("ok")]), editor=editor)
    summary = await turn.run()
    assert turn.outputs() == ["Patched app.py: 1 replacement(s)"] and summary.problems is None
    assert editor.asked == ([] if why == "unavailable" else [("app.py", 2000, False)])  # no "before": no "after"


async def test_a_new_file_had_no_problem_and_a_removed_one_has_none_left(workspace: Path) -> None:
    write = tools(call("write", "w", file_path="new.py", content="print(undefined_name)\n"))
    remove = tools(call("remove", "r", path="new.py"))
    turn = Turn(workspace, FakeModel([write, remove, answer("ok")]))
    summary = await turn.run()
    assert "new.py:1:7: error Ruff F821" in turn.outputs()[0]
    # Nothing to ask before the write (no file yet), nothing after the remove (no file left).
    assert turn.editor is not None and turn.editor.asked == [("new.py", 2000, True)]
    assert summary.problems is None


async def test_reads_commands_and_failed_edits_are_not_checked_and_forges_own_diagnostics_never_count(workspace: Path) -> None:
    (workspace / "app.py").write_text(APP)
    model = FakeModel(
        [
            tools(call("read", "r", file_path="app.py")),
            tools(call("shell", "s", command="true")),
            patch("not in the file", "x", 1),
            answer("ok"),
        ]
    )
    editor = FakeEditor(workspace, own=True)
    turn = Turn(workspace, model, editor=editor)
    await turn.run()
    assert editor.asked == [("app.py", 2000, False)]  # the failed patch's "before" only
    model = FakeModel([patch("import os", "import os\n", 2), answer("ok")])
    turn = Turn(workspace, model, editor=FakeEditor(workspace, own=True))
    summary = await turn.run()
    assert summary.problems is None  # forge's own "patch failed" is not the editor's problem
