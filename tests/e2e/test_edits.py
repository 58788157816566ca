"""Edits to documents open in the editor: the smallest TextEdits, never a whole-document replacement."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, events, record_events  # noqa: F401 (the autouse fixture that records forge/event)

from conftest import write_script
from support.textedits import apply


def open_text(client: LanguageClient, path: Path, text: str) -> None:
    """The editor's buffer of path holds text (the disk holds the same bytes)."""
    path.write_bytes(text.encode())
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)
        )
    )


def patch(path: str, old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": path, "old_string": old, "new_string": new}}]}


@pytest.mark.parametrize(
    ("text", "old", "new", "line"),
    [
        ("a = 1\r\nb = 2\r\nc = 3\r\n", "b = 2", "b = 20", 1),
        ("def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n", "\t\treturn 1", "\t\treturn 10", 2),
        ("s = 'é😀漢'\nt = '😀' + 'x'\nu = 3\n", "'😀' + 'x'", "'😀' + 'y'", 1),
        ("first\nsecond\nlast line", "last line", "last line!", 2),
    ],
    ids=["crlf", "tabs", "non-ascii", "no-final-newline"],
)
async def test_an_edit_to_an_open_document_is_the_smallest_text_edits(
    client: LanguageClient, ws: Path, text: str, old: str, new: str, line: int
) -> None:
    src = ws / "doc.py"
    open_text(client, src, text)
    write_script(ws, patch("doc.py", old, new), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 0
    (params,) = client.answers.edits  # type: ignore[attr-defined]
    (change,) = params.edit.document_changes
    assert change.text_document.uri == src.as_uri() and change.text_document.version == 1
    edits = change.edits
    assert edits and apply(text, edits) == text.replace(old, new)
    assert all(e.range.start.line == line == e.range.end.line for e in edits), edits
    assert sum(len(e.new_text) for e in edits) < len(new)


CONFIRM = 'model = "scripted/script.json"\nedit_review = "confirm"\n\n[retry]\nmin_delay_ms = 10\n'


def confirm_mode(ws: Path) -> None:
    (ws / ".forge.toml").write_text(CONFIRM)


def annotated(params: t.ApplyWorkspaceEditParams, title: str) -> None:
    """Every change of the edit carries the one annotation that asks the user, labelled with the tool call."""
    annotations = params.edit.change_annotations or {}
    assert params.label == title and list(annotations.values()) == [
        t.ChangeAnnotation(label=title, needs_confirmation=True, description=next(iter(annotations.values())).description)
    ]
    (annotation_id,) = annotations
    for change in params.edit.document_changes or []:
        if isinstance(change, t.TextDocumentEdit):
            assert change.edits and all(
                isinstance(e, t.AnnotatedTextEdit) and e.annotation_id == annotation_id for e in change.edits
            )
        else:
            assert change.annotation_id == annotation_id


async def test_confirm_mode_sends_an_open_document_edit_for_review_and_it_lands_when_applied(
    client: LanguageClient, ws: Path
) -> None:
    confirm_mode(ws)
    src = ws / "app.py"
    open_text(client, src, "a = 1\nb = 2\n")
    write_script(ws, patch("app.py", "b = 2", "b = 3"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 0
    (params,) = client.answers.edits  # type: ignore[attr-defined]
    annotated(params, "Forge: patch app.py")
    (change,) = params.edit.document_changes
    assert change.text_document.version == 1 and apply("a = 1\nb = 2\n", change.edits) == "a = 1\nb = 3\n"


async def test_a_rejected_edit_is_a_tool_failure_counted_with_the_retry_notice(client: LanguageClient, ws: Path) -> None:
    confirm_mode(ws)
    src = ws / "app.py"
    open_text(client, src, "a = 1\n")
    client.answers.apply, client.answers.reason = False, None  # type: ignore[attr-defined]
    write_script(ws, patch("app.py", "a = 1", "a = 2"), patch("app.py", "a = 1", "a = 3"), patch("app.py", "a = 1", "a = 4"))
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["status"] == "interrupted" and result["reason"]["errors"] == {"patch": 3}
    finished = [e for e in events(client) if e.type == "toolCallFinished"]
    assert [e.ok for e in finished] == [False, False, False]
    assert all("the user rejected the edit to app.py" in e.output for e in finished), finished[0].output
    retries = [e for e in events(client) if e.type == "retry"]
    assert [(e.tool, e.attemptsLeft) for e in retries] == [("patch", 2), ("patch", 1), ("patch", 0)]
    assert retries[0].notice.startswith("Tool call failed\n- **Attempts remaining:** 2")
    assert src.read_text() == "a = 1\n"


async def test_confirm_mode_reviews_files_not_open_too(client: LanguageClient, ws: Path) -> None:
    confirm_mode(ws)
    (ws / "closed.py").write_bytes(b"x = 1\r\ny = 2\r\n")
    (ws / "gone.py").write_text("old\n")
    calls = [
        {"name": "patch", "arguments": {"file_path": "closed.py", "old_string": "y = 2", "new_string": "y = 20"}},
        {"name": "write", "arguments": {"file_path": "pkg/new.py", "content": "n = 1\n"}},
        {"name": "remove", "arguments": {"path": "gone.py"}},
    ]
    write_script(ws, {"tool_calls": calls}, {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 0
    patched, created, removed = client.answers.edits  # type: ignore[attr-defined]
    annotated(patched, "Forge: patch closed.py")
    (change,) = patched.edit.document_changes
    assert change.text_document.uri == (ws / "closed.py").as_uri() and change.text_document.version is None
    assert apply("x = 1\r\ny = 2\r\n", change.edits) == "x = 1\r\ny = 20\r\n" and change.edits[0].range.start.line == 1
    annotated(created, "Forge: write pkg/new.py")
    create, insert = created.edit.document_changes
    assert isinstance(create, t.CreateFile) and create.uri == (ws / "pkg" / "new.py").as_uri()
    assert [e.new_text for e in insert.edits] == ["n = 1\n"]
    annotated(removed, "Forge: remove gone.py")
    (delete,) = removed.edit.document_changes
    assert isinstance(delete, t.DeleteFile) and delete.uri == (ws / "gone.py").as_uri()
    # The client applied what the user accepted and left it unsaved (it cannot save when asked): the server
    # writes the accepted text, so the next command sees it. Removing a file is the client's alone.
    assert (ws / "closed.py").read_bytes() == b"x = 1\r\ny = 20\r\n" and (ws / "gone.py").exists()
    assert (ws / "pkg" / "new.py").read_text() == "n = 1\n"


@pytest.mark.no_review
async def test_confirm_mode_with_a_client_that_cannot_review_fails_clearly_and_changes_nothing(
    client: LanguageClient, ws: Path
) -> None:
    confirm_mode(ws)
    (ws / "closed.py").write_text("x = 1\n")
    write_script(ws, patch("closed.py", "x = 1", "x = 2"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 1 and client.answers.edits == []  # type: ignore[attr-defined]
    (failed,) = [e for e in events(client) if e.type == "toolCallFinished"]
    assert 'edit_review is "confirm" but this editor cannot review the edit to closed.py' in failed.output
    assert "nothing was changed" in failed.output
    assert (ws / "closed.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        (None, "app.py changed in the editor while its edit waited for review; the edit was not applied"),  # VS Code
        ("you changed it since", "the editor did not apply the edit to app.py: you changed it since"),  # Neovim
    ],
    ids=["vscode", "neovim"],
)
async def test_a_document_changed_while_its_edit_waited_is_not_called_a_rejection(
    client: LanguageClient, ws: Path, reason: str | None, said: str
) -> None:
    confirm_mode(ws)
    src = ws / "app.py"
    open_text(client, src, "a = 1\n")
    client.answers.apply, client.answers.reason = False, reason  # type: ignore[attr-defined]

    def user_types(_params: t.ApplyWorkspaceEditParams) -> None:
        change = t.TextDocumentContentChangeWholeDocument(text="a = 1\nmine = 2\n")
        client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=src.as_uri(), version=2), content_changes=[change]
            )
        )

    client.answers.on_edit = user_types  # type: ignore[attr-defined]
    write_script(ws, patch("app.py", "a = 1", "a = 2"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 1
    (failed,) = [e for e in events(client) if e.type == "toolCallFinished"]
    assert said in failed.output
    # Not made again on the user's new text and shown for review again unasked (an unreviewed patch is).
    assert len(client.answers.edits) == 1  # type: ignore[attr-defined]


async def test_confirm_mode_reviews_forge_undo_turn_too_and_a_rejected_restore_undoes_nothing(
    client: LanguageClient, ws: Path
) -> None:
    confirm_mode(ws)
    (ws / "closed.py").write_text("x = 1\n")
    write_script(ws, patch("closed.py", "x = 1", "x = 2"), {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "edit"})
    assert result["failures"] == 0 and (ws / "closed.py").read_text() == "x = 2\n"
    # The user's own undo goes to the editor for review as the agent's edits do: rejected, nothing is restored.
    client.answers.apply, client.answers.reason = False, None  # type: ignore[attr-defined]
    with pytest.raises(JsonRpcException, match=r"closed.py .*cannot undo") as refused:
        await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    assert "the user rejected the edit to closed.py" in str(refused.value.data)
    assert (ws / "closed.py").read_text() == "x = 2\n"
    client.answers.apply = True  # type: ignore[attr-defined]
    undone = await command(client, "forge.undoTurn", {"turnId": result["turnId"]})
    assert undone["files"] == [{"path": "closed.py", "action": "restored"}]
    reviewed = client.answers.edits[1:]  # type: ignore[attr-defined]
    assert len(reviewed) == 2
    annotated(reviewed[-1], "Forge: edit closed.py")
    (change,) = reviewed[-1].edit.document_changes
    assert apply("x = 2\n", change.edits) == "x = 1\n"
    assert (ws / "closed.py").read_text() == "x = 1\n"
