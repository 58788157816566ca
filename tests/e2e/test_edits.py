"""Edits to documents open in the editor: the smallest TextEdits, never a whole-document replacement."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient
from test_lsp import command

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
