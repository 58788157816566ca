"""forge.undoTurn through the real server: open documents restored through workspace/applyEdit, other
files on disk, created files removed; refused, naming the file, where the user changed one since."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from conftest import write_script

pytestmark = pytest.mark.timeout(90)


async def command(client: LanguageClient, name: str, arg: Any = None) -> Any:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=[arg or {}]))


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def typed(client: LanguageClient, path: Path, version: int, text: str) -> None:
    """The editor's buffer now holds text (the client applied an edit, or the user typed)."""
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def a_turn(client: LanguageClient, ws: Path) -> dict[str, Any]:
    """A turn that patches an open document and a closed file and creates a file; the client applies the edit."""
    (ws / "open.py").write_text("x = 1\n")
    (ws / "closed.py").write_text("y = 1\n")
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=(ws / "open.py").as_uri(), language_id="python", version=1, text="x = 1\n")
        )
    )
    write_script(
        ws,
        call("patch", file_path="open.py", old_string="x = 1", new_string="x = 2"),
        call("patch", file_path="closed.py", old_string="y = 1", new_string="y = 2"),
        call("write", file_path="made.py", content="z = 0\n"),
        {"text": "done"},
    )
    result = await command(client, "forge.run", {"prompt": "bump"})
    assert result["failures"] == 0
    typed(client, ws / "open.py", 2, "x = 2\n")
    client.answers.edits.clear()  # type: ignore[attr-defined]
    return result  # type: ignore[no-any-return]


async def test_undo_turn_restores_open_documents_through_apply_edit_and_files_on_disk(client: LanguageClient, ws: Path) -> None:
    result = await a_turn(client, ws)
    listed = await command(client, "forge.listConversations")
    assert listed[0]["turnFiles"] == [
        {
            "turnId": result["turnId"],
            "undone": False,
            "files": [
                {"path": "open.py", "action": "changed"},
                {"path": "closed.py", "action": "changed"},
                {"path": "made.py", "action": "created"},
            ],
        }
    ]
    undone = await command(client, "forge.undoTurn")
    assert undone == {
        "turnId": result["turnId"],
        "files": [
            {"path": "open.py", "action": "restored"},
            {"path": "closed.py", "action": "restored"},
            {"path": "made.py", "action": "removed"},
        ],
    }
    (edit,) = client.answers.edits  # type: ignore[attr-defined]
    (change,) = edit.edit.document_changes
    assert change.text_document.uri == (ws / "open.py").as_uri()
    assert (ws / "open.py").read_text() == "x = 1\n"  # the disk was never the turn's: the buffer was
    assert (ws / "closed.py").read_text() == "y = 1\n" and not (ws / "made.py").exists()
    with pytest.raises(JsonRpcException, match="already undone"):
        await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    listed = await command(client, "forge.listConversations")
    assert listed[0]["turnFiles"][0]["undone"] is True


async def test_undo_turn_is_refused_naming_the_file_the_user_changed_since(client: LanguageClient, ws: Path) -> None:
    result = await a_turn(client, ws)
    typed(client, ws / "open.py", 3, "x = 2  # the user's note\n")
    await asyncio.sleep(0.2)
    with pytest.raises(JsonRpcException) as refused:
        await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    assert refused.value.code == -32803 and "open.py changed since the turn" in str(refused.value)
    assert "closed.py" not in str(refused.value)
    assert client.answers.edits == []  # type: ignore[attr-defined]
    assert (ws / "closed.py").read_text() == "y = 2\n" and (ws / "made.py").read_text() == "z = 0\n"
    with pytest.raises(JsonRpcException, match="no turn 'nope'"):
        await command(client, "forge.undoTurn", {"turnId": "nope"})
    with pytest.raises(JsonRpcException, match="turnId must be"):
        await command(client, "forge.undoTurn", {"turnId": 7})


async def test_an_undo_edit_the_editor_did_not_apply_is_refused_naming_the_file_first(client: LanguageClient, ws: Path) -> None:
    """The user typed as the undo's edit arrived: the editor answers it not applied ("you changed it since",
    as the Neovim plugin does). The error is the one for a file changed since, the file first (a notification
    cut to one line still names it); the whole cause goes in data.detail and the server's log."""
    result = await a_turn(client, ws)
    client.answers.apply, client.answers.reason = False, "you changed it since"  # type: ignore[attr-defined]
    with pytest.raises(JsonRpcException) as refused:
        await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    message = refused.value.message
    assert message == (
        f"open.py changed since the turn: cannot undo; nothing was restored, and your changes are kept (turn {result['turnId']})"
    )
    assert refused.value.data["files"] == ["open.py"]
    detail = refused.value.data["detail"]
    assert "restoring open.py failed (the editor did not apply the edit to open.py: you changed it since)" in detail, detail
    assert (ws / "closed.py").read_text() == "y = 2\n" and (ws / "made.py").read_text() == "z = 0\n"
    # Any other failure to write a file back: the file first too, and what it means.
    client.answers.reason = "the disk is full"  # type: ignore[attr-defined]
    with pytest.raises(JsonRpcException) as failed:
        await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    assert failed.value.message.startswith("open.py cannot be written now (see the log): cannot undo; "), failed.value
    assert "the disk is full" in failed.value.data["detail"]
