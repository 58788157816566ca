"""Issue 35, the other direction: a command the agent runs (the shell, an MCP tool) changes a file open in the
editor. A buffer with no unsaved changes follows the disk before the turn's next tool call (the editor
reloads it when asked, forge/reloadDocuments; else the server's view is the disk's), so the next patch
applies to what the command left and the buffer is not taken for one with unsaved changes. A buffer with
the user's unsaved changes is never reloaded: the model is told in that call's result, the user once. A
removed file: said, the buffer kept. forge.undoTurn then puts back the buffer and the disk alike.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient
from test_edits_reach_disk import CALC, FIXED, TEST_CALC, UNITTEST, calls, outputs, patch
from test_lsp import command, events, record_events, until  # noqa: F401 (the autouse fixture that records forge/event)
from test_mcp_lsp import settings

from conftest import shell, write_script
from support.editor import FakeEditor

pytestmark = pytest.mark.timeout(90)

CODEMOD = Path(__file__).parent.parent / "mcp" / "servers" / "codemod.py"

SED = "sed -i 's/a - b/a + b/' calc.py"
TIMES = "def add(a, b):\n    return a * b\n"
KEPT = (
    "Note: calc.py changed on disk during this call, but the editor holds unsaved changes of the user's to it, so "
    "its buffer was not reloaded: read, patch and write see the buffer (the user's text, without this change); "
    "commands (shell, tests) see the disk."
)


@pytest.fixture
def editor(client: LanguageClient, ws: Path) -> FakeEditor:
    (ws / "test_calc.py").write_text(TEST_CALC)
    fake = FakeEditor(client)
    client.answers.editor = fake  # type: ignore[attr-defined]
    return fake


def told_user(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if "changed on disk (the agent's" in m.message]


async def sed_then_patch(client: LanguageClient, ws: Path) -> dict[str, Any]:
    """The issue's turn: the shell fixes calc.py (sed -i), then the agent patches it again and runs its test."""
    write_script(ws, shell(SED), calls(patch("a + b", "a * b")), shell(UNITTEST), {"text": "done"})
    return await command(client, "forge.run", {"prompt": "fix add"})  # type: ignore[no-any-return]


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
@pytest.mark.parametrize("reopens", [True, False], ids=["neovim", "vscode"])
async def test_a_clean_buffer_the_shell_changed_is_reloaded_before_the_next_call(
    client: LanguageClient, ws: Path, editor: FakeEditor, reopens: bool, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    editor.reopens = reopens
    buf = editor.open(calc, disk=CALC)
    result = await sed_then_patch(client, ws)
    # The patch read what the shell left (a + b): it applied, and it was saved; the test then ran on it.
    assert outputs(client, "patch") == ["Patched calc.py: 1 replacement(s)"]
    assert buf.text == calc.read_text() == TIMES and not buf.modified
    assert editor.reloads == [{"uri": calc.as_uri(), "version": 1}]
    assert all("Note" not in out for out in outputs(client, "shell"))
    assert result["failures"] == 1  # the test expects a + b: the model's own mistake, seen on the disk
    record_reliability(
        "a shell command changes a file open and unmodified in the editor",
        f"sed -i on calc.py, then a patch of it in the same turn ({'Neovim: didClose + didOpen' if reopens else 'VS Code: didChange'})",
        "the editor reloaded it when asked (forge/reloadDocuments) before the patch, which applied to the shell's text",
    )


@pytest.mark.parametrize("saves", [pytest.param(True, marks=pytest.mark.saves_documents), False], ids=["saves", "plain"])
async def test_a_client_that_cannot_reload_gets_the_servers_view_following_the_disk(
    client: LanguageClient, ws: Path, editor: FakeEditor, saves: bool
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    await sed_then_patch(client, ws)
    assert outputs(client, "patch") == ["Patched calc.py: 1 replacement(s)"]  # no "unsaved changes" note
    assert calc.read_text() == TIMES and buf.text == TIMES  # the edit went from the buffer's text to the new one
    assert editor.reloads == []  # never asked: it did not say it can


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_a_buffer_with_the_users_unsaved_changes_is_not_reloaded_and_the_model_is_told(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    mine = CALC + "# my unsaved line\n"
    buf = editor.open(calc, text=mine, disk=CALC)
    write_script(ws, shell(SED), shell("echo '# more' >> calc.py"), {"text": "done"})
    await command(client, "forge.run", {"prompt": "fix add"})
    assert buf.text == mine and buf.modified  # nothing the user typed is lost
    assert calc.read_text() == FIXED + "# more\n"
    assert editor.reloads == []
    # The model told after each call, the user once.
    assert [out.endswith("\n\n" + KEPT) for out in outputs(client, "shell")] == [True, True]
    assert told_user(client) == [
        "Forge: calc.py changed on disk (the agent's shell call) while it has unsaved changes of yours: your buffer is kept as it is"
    ]
    record_reliability(
        "a shell command changes a file open in the editor with the user's unsaved changes",
        "sed -i on calc.py while its buffer holds a line the user did not save",
        "not reloaded: the user's line is kept; the model told in the call's result that the disk and the buffer differ, the user once",
    )


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_the_user_typing_while_the_command_runs_is_kept(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    editor.types_during_command = "# typed meanwhile\n"
    write_script(ws, shell(SED), {"text": "done"})
    await command(client, "forge.run", {"prompt": "fix add"})
    assert buf.text == CALC + "# typed meanwhile\n" and calc.read_text() == FIXED
    assert outputs(client, "shell")[0].endswith("\n\n" + KEPT)
    assert editor.reloads == [{"uri": calc.as_uri(), "version": 1}]


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_a_file_the_shell_removed_is_said_and_its_buffer_kept(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    read = {"name": "read", "arguments": {"file_path": "calc.py"}}
    write_script(ws, shell("rm calc.py"), calls(read), {"text": "done"})
    await command(client, "forge.run", {"prompt": "remove it"})
    assert not calc.exists() and buf.text == CALC
    assert outputs(client, "shell")[0].endswith(
        "Note: calc.py was removed from the disk during this call; the editor still has it open (its buffer is kept, "
        "not saved): read and patch find no such file, and a write creates it again."
    )
    (failed,) = [e.output for e in events(client) if e.type == "toolCallFinished" and e.tool == "read"]
    assert "file not found: calc.py" in failed
    assert editor.reloads == []


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_a_command_that_changes_nothing_asks_nothing(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    editor.open(calc, disk=CALC)
    mine = ws / "mine.py"
    editor.open(mine, text="x = 2\n", disk="x = 1\n")  # unsaved changes of the user's
    # Touched, and written again with the same text (a formatter with nothing to do): nothing changed.
    write_script(ws, shell("touch calc.py && cp mine.py mine.tmp && mv mine.tmp mine.py"), {"text": "done"})
    await command(client, "forge.run", {"prompt": "look"})
    assert editor.reloads == [] and "Note" not in outputs(client, "shell")[0]
    assert told_user(client) == []


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_undo_turn_puts_back_what_the_shell_changed_in_an_open_file(
    client: LanguageClient, ws: Path, editor: FakeEditor, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    # The patch, then the shell on the same file; then the shell alone on another open file.
    other = ws / "other.py"
    other_buf = editor.open(other, disk="x = 1\n")
    write_script(
        ws,
        calls(patch("a - b", "a + b")),
        shell("sed -i 's/a + b/a * b/' calc.py && sed -i 's/x = 1/x = 2/' other.py"),
        {"text": "done"},
    )
    await command(client, "forge.run", {"prompt": "fix add"})
    assert calc.read_text() == buf.text == TIMES and other.read_text() == other_buf.text == "x = 2\n"
    undone = await command(client, "forge.undoTurn", {})
    assert sorted(undone["files"], key=lambda f: f["path"]) == [
        {"path": "calc.py", "action": "restored"},
        {"path": "other.py", "action": "restored"},
    ]
    assert calc.read_text() == buf.text == CALC and not buf.modified
    assert other.read_text() == other_buf.text == "x = 1\n" and not other_buf.modified
    record_reliability(
        "undo of a turn whose shell changed files open in the editor",
        "patch calc.py, then sed -i on it and on another open file; forge.undoTurn",
        "both files put back as before the turn, in the buffer and on disk alike",
    )


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_a_cancelled_command_s_change_still_reaches_the_buffer(
    client: LanguageClient, ws: Path, editor: FakeEditor
) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    write_script(ws, shell(f"{SED} && touch sed.done && sleep 30"), {"text": "never"})
    run = asyncio.ensure_future(command(client, "forge.run", {"prompt": "slow"}))
    await until(lambda: (ws / "sed.done").exists())
    assert (await command(client, "forge.cancel", {}))["cancelled"] is True
    assert (await asyncio.wait_for(run, 5))["status"] == "cancelled"
    await until(lambda: buf.text == FIXED)
    assert editor.reloads == [{"uri": calc.as_uri(), "version": 1}] and not buf.modified


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_an_mcp_tools_change_reaches_the_buffer_too(client: LanguageClient, ws: Path, editor: FakeEditor) -> None:
    calc = ws / "calc.py"
    buf = editor.open(calc, disk=CALC)
    await settings(client, {"codemod": {"command": sys.executable, "args": [str(CODEMOD)]}})
    replace = {"name": "mcp_codemod_replace", "arguments": {"path": str(calc), "old": "a - b", "new": "a + b"}}
    write_script(ws, calls(replace), calls(patch("a + b", "a * b")), {"text": "done"})
    await command(client, "forge.run", {"prompt": "code-mod"})
    assert outputs(client, "patch") == ["Patched calc.py: 1 replacement(s)"]
    assert buf.text == calc.read_text() == TIMES and not buf.modified
    assert editor.reloads == [{"uri": calc.as_uri(), "version": 1}]


@pytest.mark.saves_documents
@pytest.mark.reloads_documents
async def test_an_open_file_a_command_turns_into_a_fifo_or_a_link_out_is_not_read(
    client: LanguageClient, ws: Path, editor: FakeEditor, tmp_path: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    calc, other = ws / "calc.py", ws / "other.py"
    buf = editor.open(calc, disk=CALC)
    other_buf = editor.open(other, disk="x = 1\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret\n")
    read = {"name": "read", "arguments": {"file_path": "other.py"}}
    write_script(ws, shell(f"rm calc.py && mkfifo calc.py && ln -sf {secret} other.py"), calls(read), {"text": "done"})
    result = await asyncio.wait_for(command(client, "forge.run", {"prompt": "swap"}), 60)
    assert result["status"] == "completed"  # nothing waited on the FIFO
    assert buf.text == CALC and other_buf.text == "x = 1\n"
    assert all("the user's secret" not in out for out in outputs(client, "shell") + outputs(client, "read"))
    assert editor.reloads == []
    record_reliability(
        "attack: a command turns files open in the editor into a FIFO and a link to a file outside the workspace",
        "rm calc.py && mkfifo calc.py && ln -sf /outside/secret.txt other.py, then read other.py",
        "no read blocks on the FIFO; the link's target reaches neither the model nor the buffers (read refuses the path)",
    )
