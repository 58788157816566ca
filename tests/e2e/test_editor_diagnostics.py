"""Issue 37 section 1 through the real server: after each edit the server asks the editor for its own diagnostics of
the file (forge/diagnostics), and the new problems reach the model, forge.run's answer, turnFinished, the log and the
transcript. The client is support.editor.FakeEditor, whose "language server" flags each line holding undefined_name
(Ruff's F821, an error) and each `# warn` (a warning).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient
from test_lsp import command, events, record_events  # noqa: F401 (the autouse fixture that records forge/event)

from conftest import write_script
from support.editor import FakeEditor

pytestmark = pytest.mark.timeout(60)

APP = "import os\n\nprint(os.name)\n"
BROKEN = "import os\n\nprint(undefined_name)\n"


def lint(path: Path, text: str) -> list[dict[str, Any]]:
    found = []
    for i, line in enumerate(text.splitlines()):
        if "undefined_name" in line:
            at = line.index("undefined_name")
            found.append(
                {
                    "range": {"start": {"line": i, "character": at}, "end": {"line": i, "character": at + 14}},
                    "severity": 1,
                    "source": "Ruff",
                    "code": "F821",
                    "message": "Undefined name `undefined_name`",
                }
            )
        if "# warn" in line:
            found.append({"range": {"start": {"line": i, "character": 0}}, "severity": 2, "source": "Ruff", "message": "w"})
    # forge-lsp's own Warning on the file, as an editor that did not leave it out would give it: never a problem.
    found.append({"range": {"start": {"line": 0, "character": 0}}, "severity": 1, "source": "forge", "message": "patch failed"})
    return found


def patch(old: str, new: str, path: str = "app.py") -> dict[str, Any]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": path, "old_string": old, "new_string": new}}]}


@pytest.fixture
def editor(client: LanguageClient) -> FakeEditor:
    fake = FakeEditor(client, lint=lint)
    client.answers.editor = fake  # type: ignore[attr-defined]
    return fake


def of(client: LanguageClient, kind: str) -> list[Any]:
    return [e for e in events(client) if e.type == kind]


def outputs(client: LanguageClient) -> list[str]:
    return [e.output for e in of(client, "toolCallFinished")]


@pytest.mark.saves_documents
@pytest.mark.reports_diagnostics
async def test_an_edit_that_adds_an_undefined_name_gets_the_problem_to_the_model_and_the_turns_end(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    app = ws / "app.py"
    editor.open(app, disk=APP)
    write_script(ws, patch("print(os.name)", "print(undefined_name)"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["status"] == "completed" and result["failures"] == 0
    assert result["problems"] == {"count": 1, "files": [{"path": "app.py", "count": 1}]}
    (output,) = outputs(client)
    assert output.splitlines()[2:4] == [
        "The editor reports 1 new problem in app.py (not there before this turn's edits; from its language servers):",
        "app.py:3:7: error Ruff F821: Undefined name `undefined_name`",
    ]
    # Asked before the edit (the open document: what the editor has now) and after it, at the version it reported.
    before, after = editor.diagnostics_asked
    assert before == {"documents": [{"uri": app.as_uri(), "version": 1}], "waitMs": 0}
    assert after == {"documents": [{"uri": app.as_uri(), "version": 2}], "waitMs": 2000}
    (checked,) = of(client, "problems")
    assert (checked.path, checked.count, checked.failed, checked.caughtUp) == ("app.py", 1, False, True)
    assert checked.problems[0].line == 3 and checked.problems[0].code == "F821"
    finished = of(client, "turnFinished")[-1]
    assert finished.problems.count == 1 and finished.summary.problems.files[0].path == "app.py"
    transcript = (ws / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text()
    assert "## Problems left\n\nThe editor reports 1 new problem in app.py that this turn's edits made:" in transcript
    assert "app.py:3:7: error Ruff F821: Undefined name `undefined_name`" in transcript
    logged = "\n".join(m.message for m in client.log_messages)
    assert "⚠ editor: 1 new problem in app.py" in logged and "left: 1 new problem in app.py (1)" in logged
    record_reliability(
        "an agent's edit leaves an error the editor's language server reports",
        "patch app.py to call an undefined name; the editor answers forge/diagnostics with its language server's F821",
        "the model reads app.py:3:7 error Ruff F821 in the patch's result; forge.run and turnFinished carry problems",
    )


@pytest.mark.saves_documents
@pytest.mark.reports_diagnostics
@pytest.mark.settings({"settings": {"verify": {"diagnostics": "fail"}}})
async def test_fail_mode_gives_the_retry_notice_with_attempts_2_then_the_fix_clears_it(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    app = ws / "app.py"
    buf = editor.open(app, disk=APP)
    write_script(
        ws,
        patch("print(os.name)", "print(undefined_name)"),
        patch("print(undefined_name)", "print(os.sep)"),
        {"text": "fixed"},
    )
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["status"] == "completed" and result["failures"] == 1 and "problems" not in result
    assert buf.text == app.read_text() == "import os\n\nprint(os.sep)\n"
    (retry,) = of(client, "retry")
    assert (retry.tool, retry.attemptsLeft, retry.path) == ("patch", 2, "app.py")
    failed, fixed = of(client, "toolCallFinished")
    assert not failed.ok and "app.py:3:7: error Ruff F821" in failed.output and "counts as failed" in failed.output
    assert fixed.ok and fixed.output.endswith("The editor no longer reports the new problems this turn's edits made in app.py.")
    assert [e.failed for e in of(client, "problems")] == [True, False]
    record_reliability(
        '[verify] diagnostics = "fail": an edit that leaves a new error is a failed call',
        "patch app.py to call an undefined name, then patch it back",
        "the first patch fails with the retry notice (attempts remaining 2), the edit stays; the fix succeeds and clears it",
    )


@pytest.mark.saves_documents
@pytest.mark.reports_diagnostics
@pytest.mark.settings({"settings": {"verify": {"diagnostics": "off"}}})
async def test_off_asks_the_editor_nothing(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    editor.open(ws / "app.py", disk=APP)
    write_script(ws, patch("print(os.name)", "print(undefined_name)"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert "problems" not in result and editor.diagnostics_asked == [] and of(client, "problems") == []
    assert outputs(client) == ["Patched app.py: 1 replacement(s)"]
    status = await command(client, "forge.status", {})
    assert status["verify"] == {"diagnostics": "off", "editor": True}


@pytest.mark.reports_diagnostics
async def test_a_file_not_open_is_opened_by_the_editor_before_the_edit_and_only_new_problems_count(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    app = ws / "app.py"
    app.write_text("x = undefined_name\n" + APP)  # a problem the file already had
    write_script(ws, patch("import os", "import os  # warn"), patch("print(os.name)", "print(os.sep)"), {"text": "ok"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert "problems" not in result and editor.hidden == [app]
    first = editor.diagnostics_asked[0]
    assert first == {"documents": [{"uri": app.as_uri(), "version": None}], "waitMs": 2000}  # the editor opens it first
    assert [e.count for e in of(client, "problems")] == [0, 0]
    assert all("problem" not in o for o in outputs(client))


async def test_a_client_that_cannot_is_told_once_and_forge_status_says_why(client: LanguageClient, ws: Path) -> None:
    (ws / "app.py").write_text(APP)
    write_script(ws, patch("print(os.name)", "print(undefined_name)"), patch("import os", "import sys"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 0 and "problems" not in result and of(client, "problems") == []
    told = [m.message for m in client.log_messages if "forge/diagnostics" in m.message]
    assert told == [
        "forge-lsp: this editor does not answer forge/diagnostics (the Forge VS Code extension and Neovim plugin do), so the "
        "agent's edits are not checked against its diagnostics ([verify] diagnostics)"
    ]
    status = await command(client, "forge.status", {})
    assert status["verify"]["editor"] is False and "does not answer forge/diagnostics" in status["verify"]["reason"]


@pytest.mark.reports_diagnostics
@pytest.mark.parametrize(
    "answer", [{"not": "a list"}, [{"uri": "x", "diagnostics": "many"}], [], [{"diagnostics": [1, None, {}]}]]
)
async def test_a_wrong_answer_leaves_the_call_unchecked_and_the_turn_goes_on(
    client: LanguageClient, ws: Path, editor: FakeEditor, answer: Any
) -> None:
    editor.diagnostics_answer = answer
    editor.open(ws / "app.py", disk=APP)
    write_script(ws, patch("print(os.name)", "print(undefined_name)"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["status"] == "completed" and result["failures"] == 0 and "problems" not in result
    assert outputs(client)[0].startswith("Patched app.py: 1 replacement(s)")
    assert not any(m.type == t.MessageType.Error for m in client.log_messages)
