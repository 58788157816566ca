"""Issue 35 section 1: the agent's edit to an open document reaches the disk before the turn's next tool call.

calc.py is open and unmodified; the turn patches it (a - b -> a + b) and runs its test: the test passes,
whether the editor saves the document when asked (forge/saveDocuments, as the Neovim plugin and the VS Code
extension do) or cannot (the server writes the same text). A buffer with the user's unsaved changes is never
saved: the edit stays in it, and the model and the user are told. A second patch sent before the editor
reported the first (Neovim's didChange comes up to 150 ms later) applies to the first one's result.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient
from test_lsp import command, events, record_events  # noqa: F401 (the autouse fixture that records forge/event)

from conftest import shell, write_script
from support.editor import FakeEditor

pytestmark = pytest.mark.timeout(90)

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
UNITTEST = "python3 -m unittest -q test_calc"


def patch(old: str, new: str, path: str = "calc.py") -> dict[str, Any]:
    return {"name": "patch", "arguments": {"file_path": path, "old_string": old, "new_string": new}}


def calls(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(tool_calls)}


@pytest.fixture
def editor(client: LanguageClient, ws: Path) -> FakeEditor:
    (ws / "test_calc.py").write_text(TEST_CALC)
    fake = FakeEditor(client)
    client.answers.editor = fake  # type: ignore[attr-defined]
    return fake


def outputs(client: LanguageClient, tool: str) -> list[str]:
    return [e.output for e in events(client) if e.type == "toolCallFinished" and e.tool == tool]


def warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if "unsaved changes of yours" in m.message]


async def the_newcomers_turn(client: LanguageClient, ws: Path) -> dict[str, Any]:
    """The turn of the issue: patch calc.py, then run its test."""
    write_script(
        ws, calls(patch("a - b", "a + b")), calls({"name": "shell", "arguments": {"command": UNITTEST}}), {"text": "done"}
    )
    return await command(client, "forge.run", {"prompt": "fix add"})  # type: ignore[no-any-return]


@pytest.mark.saves_documents
async def test_a_client_that_saves_is_asked_to_and_the_test_then_passes(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    result = await the_newcomers_turn(client, ws)
    assert result["failures"] == 0, outputs(client, "shell")
    assert calc.read_text() == FIXED and buf.text == FIXED and not buf.modified
    # Saved by the editor, at the version in which it reported the edit (nothing typed since).
    assert editor.saves == [{"uri": calc.as_uri(), "version": 2}]
    assert outputs(client, "patch") == ["Patched calc.py: 1 replacement(s)"]
    record_reliability(
        "an agent edit to a document open and unmodified in the editor",
        "patch calc.py through workspace/applyEdit, then run its test in the same turn",
        "the editor saved it when asked (forge/saveDocuments): the test saw the edit (0 failures), the buffer is unmodified",
    )


async def test_a_client_that_cannot_save_gets_the_edit_written_by_the_server(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    result = await the_newcomers_turn(client, ws)
    assert result["failures"] == 0, outputs(client, "shell")
    assert calc.read_text() == FIXED and buf.text == FIXED
    assert editor.saves == []  # never asked: it did not say it can
    assert outputs(client, "patch") == ["Patched calc.py: 1 replacement(s)"]


@pytest.mark.saves_documents
async def test_a_buffer_with_the_users_unsaved_changes_is_never_saved_and_the_model_is_told(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    mine = CALC + "# my unsaved line\n"
    buf = editor.open(calc, text=mine, disk=CALC)
    write_script(
        ws,
        calls(patch("a - b", "a + b")),
        calls(patch("a + b", "b + a")),
        calls({"name": "shell", "arguments": {"command": UNITTEST}}),
        {"text": "done"},
    )
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert buf.text == "def add(a, b):\n    return b + a\n# my unsaved line\n" and buf.modified
    assert calc.read_text() == CALC and editor.saves == []
    first, second = outputs(client, "patch")
    note = (
        "Note: calc.py has unsaved changes in the editor, so this edit was made in the editor's buffer and not saved: "
        "commands (shell, tests) see the version on disk until the user saves it."
    )
    assert first == f"Patched calc.py: 1 replacement(s)\n\n{note}" and second.endswith(note)
    assert result["failures"] == 1  # the test ran on the disk's version, as the model was told it would
    # The user is told once, not on each edit.
    assert warnings(client) == [
        "Forge: calc.py has unsaved changes of yours, so the agent's edit stays in the buffer: "
        "its commands see the file on disk until you save"
    ]
    record_reliability(
        "an agent edit to a document with the user's unsaved changes",
        "two patches of calc.py, then a command, in a client that saves when asked",
        "never saved: the user's line and both edits are in the buffer, the disk unchanged; the model told in each result, the user once",
    )


@pytest.mark.saves_documents
async def test_the_user_typing_right_after_the_edit_is_not_saved(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.user_types = "# typed at once\n"  # in the same didChange as the edit
    write_script(ws, calls(patch("a - b", "a + b")), {"text": "done"})
    await command(client, "forge.run", {"prompt": "fix add"})
    assert buf.text == FIXED + "# typed at once\n" and calc.read_text() == CALC and editor.saves == []
    assert "calc.py has unsaved changes in the editor" in outputs(client, "patch")[0]


@pytest.mark.saves_documents
async def test_the_user_typing_after_the_edit_was_reported_is_theirs_and_the_next_patch_keeps_it(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.types_after_save = "# typed next\n"
    write_script(ws, calls(patch("a - b", "a + b")), calls(patch("a + b", "b + a")), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert result["failures"] == 0, outputs(client, "patch")
    assert buf.text == "def add(a, b):\n    return b + a\n# typed next\n" and buf.modified
    assert calc.read_text() == FIXED  # the first edit was saved; the second went to the buffer with their line
    first, second = outputs(client, "patch")
    assert "Note" not in first and "calc.py has unsaved changes in the editor" in second


@pytest.mark.saves_documents
@pytest.mark.parametrize(("says_why", "report_ms"), [(True, 150), (False, 0)], ids=["neovim", "vscode"])
async def test_the_user_typing_while_the_patch_was_made_keeps_their_line_and_the_patch_is_made_again(
    client: LanguageClient, ws: Path, editor: FakeEditor, says_why: bool, report_ms: int
) -> None:
    # The editor refuses the edit, made for the version before their typing (VS Code's client without saying
    # why; Neovim says why, and reports the typing 150 ms later); the same replacement, made again on their
    # text, lands beside it (the race above, made certain).
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.says_why, editor.report_ms = says_why, report_ms
    editor.types_before_edit = lambda text: text + "# typed meanwhile\n"
    write_script(ws, calls(patch("a - b", "a + b")), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert result["failures"] == 0, outputs(client, "patch")
    assert buf.text == FIXED + "# typed meanwhile\n" and buf.modified and calc.read_text() == CALC
    (out,) = outputs(client, "patch")
    assert out.startswith("Patched calc.py: 1 replacement(s)") and "calc.py has unsaved changes in the editor" in out


async def test_the_user_typing_away_what_the_patch_replaces_fails_it_with_why(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.types_before_edit = lambda text: text.replace("a - b", "a * b")
    write_script(ws, calls(patch("a - b", "a + b")), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert result["failures"] == 1
    assert buf.text == "def add(a, b):\n    return a * b\n" and calc.read_text() == CALC
    (out,) = outputs(client, "patch")
    assert "old_string not found in calc.py" in out


@pytest.mark.parametrize("saves", [pytest.param(True, marks=pytest.mark.saves_documents), False], ids=["saves", "cannot-save"])
async def test_two_patches_in_one_response_before_the_editor_reports_the_first(
    client: LanguageClient, ws: Path, editor: FakeEditor, saves: bool, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.report_ms = 150  # Neovim's didChange debounce
    write_script(ws, calls(patch("a - b", "a + b"), patch("a + b", "a + b  # fixed")), shell(UNITTEST), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert result["failures"] == 0, outputs(client, "patch") + outputs(client, "shell")
    assert buf.text == calc.read_text() == "def add(a, b):\n    return a + b  # fixed\n"
    record_reliability(
        "two patches of one open file in one model response",
        f"the editor reports each edit 150 ms late (Neovim's debounce); {'saves when asked' if saves else 'cannot save'}",
        "the second patch read the first one's result (not the text before the server's own edit); both applied and on disk",
    )


@pytest.mark.saves_documents
async def test_an_edit_reported_in_pieces_is_saved_once_the_editor_has_all_of_it(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    calc = ws / "calc.py"
    text = "import os\n\n\n" + CALC
    buf = editor.open(calc, disk=text)
    editor.report_ms, editor.in_pieces = 150, True
    # Two hunks (the import and the operator) in one edit: Neovim reports the first one at once, the other
    # 150 ms later; the undo's edit puts both back, reported the same way.
    write_script(
        ws,
        calls({"name": "write", "arguments": {"file_path": "calc.py", "content": FIXED, "overwrite": True}}),
        calls({"name": "undo", "arguments": {"path": "calc.py"}}, patch("a - b", "a * b")),
        {"text": "done"},
    )
    result = await command(client, "forge.run", {"prompt": "fix add"})
    assert result["failures"] == 0, outputs(client, "undo") + outputs(client, "patch")
    # The write and the undo were each saved at the version that holds all of the edit; the patch after
    # the undo read the undo's whole result.
    assert buf.text == calc.read_text() == "import os\n\n\ndef add(a, b):\n    return a * b\n" and not buf.modified
    assert [s["version"] for s in editor.saves] == [3, 5, 6]
    assert all("Note" not in out for out in outputs(client, "write") + outputs(client, "undo") + outputs(client, "patch"))


@pytest.mark.saves_documents
async def test_an_edit_accepted_in_review_is_saved(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    (ws / ".forge.toml").write_text('model = "scripted/script.json"\nedit_review = "confirm"\n\n[retry]\nmin_delay_ms = 10\n')
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    result = await the_newcomers_turn(client, ws)
    assert result["failures"] == 0, outputs(client, "shell")
    (params,) = client.answers.edits  # type: ignore[attr-defined]
    assert params.edit.change_annotations  # it was sent for review
    assert calc.read_text() == FIXED and not buf.modified and len(editor.saves) == 1


@pytest.mark.saves_documents
async def test_the_undo_tool_and_undo_turn_reach_the_disk(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    undo = {"name": "undo", "arguments": {"path": "calc.py"}}
    write_script(ws, calls(patch("a - b", "a + b")), calls(undo), shell("grep -q 'a - b' calc.py"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "fix and take it back"})
    assert result["failures"] == 0, outputs(client, "shell")
    assert calc.read_text() == CALC and not buf.modified
    await the_newcomers_turn(client, ws)
    assert calc.read_text() == FIXED
    undone = await command(client, "forge.undoTurn", {})
    assert undone["files"] == [{"path": "calc.py", "action": "restored"}]
    assert calc.read_text() == buf.text == CALC and not buf.modified


@pytest.mark.saves_documents
async def test_a_save_that_reformats_is_told_to_the_model(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    editor.open(calc, disk=CALC)

    def format_on_save(buf: Any) -> None:
        buf.text = buf.text.replace("a + b", "(a + b)")
        buf.version += 1

    editor.on_save = format_on_save
    write_script(ws, calls(patch("a - b", "a + b")), {"text": "done"})
    await command(client, "forge.run", {"prompt": "fix add"})
    assert calc.read_text() == "def add(a, b):\n    return (a + b)\n"
    assert outputs(client, "patch") == [
        "Patched calc.py: 1 replacement(s)\n\nNote: saving calc.py in the editor changed its text "
        "(the user's format-on-save): read it again before patching it."
    ]


@pytest.mark.untrusted
@pytest.mark.saves_documents
async def test_the_editors_save_of_the_agents_edit_to_the_config_is_not_the_users(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    """The editor saves .forge.toml for the agent when asked: that didSave is not the user's own save, which
    would keep the workspace trusted (lsp/user_saves.py); the changed config asks for trust again."""
    config = ws / ".forge.toml"
    hostile = config.read_text() + 'api_base = "http://127.0.0.1:9/v1"\n'
    write = {"name": "write", "arguments": {"file_path": ".forge.toml", "content": hostile, "overwrite": True}}
    write_script(ws, calls(write), {"text": "done"})  # before the trust: the script .forge.toml names is covered by it
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    buf = editor.open(config)
    await command(client, "forge.run", {"prompt": "w"})
    assert config.read_text() == hostile and not buf.modified and len(editor.saves) == 1
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")
