"""Undo a turn (forge.undoTurn): each turn records what its file tools changed, and an undo puts it
all back, or nothing when the user changed a file since."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.errors import TurnInProgress
from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.core.turn_undo import UndoRefused, digest, undo_turn
from forge_lsp.state.db import COLUMNS
from forge_lsp.state.store import StateStore
from forge_lsp.state.turn_files import TurnFiles
from forge_lsp.tools.base import ChangedSince, DiskFiles, ToolFailure


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def runtime_with(root: Path, *responses: Any) -> WorkspaceRuntime:
    (root / "s.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/s.json"\n')
    return WorkspaceRuntime(root, trusted=True)


TURN = (
    call("patch", file_path="app.py", old_string="a = 1", new_string="a = 2"),
    call("patch", file_path="app.py", old_string="a = 2", new_string="a = 3"),
    call("write", file_path="new.txt", content="made by the turn\n"),
    call("remove", path="old.txt"),
    {"text": "done"},
)


def seed(root: Path) -> None:
    (root / "app.py").write_text("a = 1\n")
    (root / "old.txt").write_bytes(b"caf\xe9 latin-1\r\n")  # not UTF-8, CRLF: restored byte for byte


async def test_a_turn_records_each_file_once_with_its_content_before_the_turn(workspace: Path) -> None:
    seed(workspace)
    runtime = runtime_with(workspace, *TURN)
    try:
        summary = await runtime.run("edit", lambda e: None)
        files = {f.path: f for f in TurnFiles(runtime.store).files(summary.turn_id)}
        assert {p: f.action for p, f in files.items()} == {"app.py": "changed", "new.txt": "created", "old.txt": "removed"}
        assert files["app.py"].previous == b"a = 1\n"  # before the first patch, not the second
        assert files["app.py"].digest == digest("a = 3\n")
        assert files["new.txt"].previous is None and files["old.txt"].digest is None
        listed = runtime.list_conversations()[0]["turnFiles"]
        assert listed == [
            {
                "turnId": summary.turn_id,
                "undone": False,
                "files": [
                    {"path": "app.py", "action": "changed"},
                    {"path": "new.txt", "action": "created"},
                    {"path": "old.txt", "action": "removed"},
                ],
            }
        ]
        transcript = (workspace / ".forge" / "transcripts" / f"{summary.turn_id}.md").read_text()
        assert "## Files changed\n\n- changed app.py\n- created new.txt\n- removed old.txt\n" in transcript
    finally:
        runtime.close()


async def test_undo_restores_every_file_and_survives_a_restart(workspace: Path) -> None:
    seed(workspace)
    runtime = runtime_with(workspace, *TURN)
    try:
        summary = await runtime.run("edit", lambda e: None)
    finally:
        runtime.close()
    again = WorkspaceRuntime(workspace, trusted=True)  # a restarted server
    try:
        result = await again.undo_turn()
        assert result == {
            "turnId": summary.turn_id,
            "files": [
                {"path": "app.py", "action": "restored"},
                {"path": "new.txt", "action": "removed"},
                {"path": "old.txt", "action": "recreated"},
            ],
        }
        assert (workspace / "app.py").read_text() == "a = 1\n" and not (workspace / "new.txt").exists()
        assert (workspace / "old.txt").read_bytes() == b"caf\xe9 latin-1\r\n"
        with pytest.raises(UndoRefused, match="already undone"):
            await again.undo_turn(summary.turn_id)
        assert again.list_conversations()[0]["turnFiles"][0]["undone"] is True
        transcript = (workspace / ".forge" / "transcripts" / f"{summary.turn_id}.md").read_text()
        assert "## Undone" in transcript and "recreated old.txt" in transcript
    finally:
        again.close()


async def test_a_file_changed_since_refuses_the_whole_undo_naming_it(workspace: Path) -> None:
    seed(workspace)
    runtime = runtime_with(workspace, *TURN)
    try:
        summary = await runtime.run("edit", lambda e: None)
        (workspace / "new.txt").write_text("the user's own words\n")
        with pytest.raises(UndoRefused) as refused:
            await runtime.undo_turn()
        assert refused.value.files == ["new.txt"] and "new.txt changed since the turn" in str(refused.value)
        # Nothing restored: not even the files the user did not touch.
        assert (workspace / "app.py").read_text() == "a = 3\n" and not (workspace / "old.txt").exists()
        assert (workspace / "new.txt").read_text() == "the user's own words\n"
        (workspace / "old.txt").write_text("the user made it again\n")
        with pytest.raises(UndoRefused, match="new.txt, old.txt changed since"):
            await runtime.undo_turn(summary.turn_id)
    finally:
        runtime.close()


async def test_what_a_command_changed_in_the_turns_files_is_put_back_too(workspace: Path) -> None:
    """A file the turn's tools changed, then its shell (a formatter, sed -i): the undo puts back the file as
    it was before the turn (it was refused as changed since). A file only the shell changed is not recorded."""
    (workspace / "app.py").write_text("a = 1\n")
    (workspace / "other.py").write_text("b = 1\n")
    (workspace / "gone.py").write_text("c = 1\n")
    runtime = runtime_with(
        workspace,
        call("patch", file_path="app.py", old_string="a = 1", new_string="a = 2"),
        call("write", file_path="gone.py", content="c = 2\n", overwrite=True),
        call("shell", command="sed -i 's/a = 2/a = 3/' app.py && sed -i 's/b = 1/b = 2/' other.py && rm gone.py"),
        {"text": "done"},
    )
    try:
        summary = await runtime.run("edit", lambda e: None)
        assert summary.failures == 0
        files = {f.path: f for f in TurnFiles(runtime.store).files(summary.turn_id)}
        assert files["app.py"].digest == digest("a = 3\n") and files["gone.py"].digest is None
        assert "other.py" not in files
        result = await runtime.undo_turn()
        assert result["files"] == [{"path": "app.py", "action": "restored"}, {"path": "gone.py", "action": "recreated"}]
        assert (workspace / "app.py").read_text() == "a = 1\n" and (workspace / "gone.py").read_text() == "c = 1\n"
        assert (workspace / "other.py").read_text() == "b = 2\n"
    finally:
        runtime.close()


async def test_a_cancelled_turn_is_undoable_and_undo_is_refused_while_a_turn_runs(workspace: Path) -> None:
    (workspace / "app.py").write_text("a = 1\n")
    runtime = runtime_with(
        workspace,
        call("patch", file_path="app.py", old_string="a = 1", new_string="a = 2"),
        call("shell", command="sleep 30"),
        {"text": "never"},
    )
    try:
        import asyncio

        started = asyncio.Event()

        def emit(event: Any) -> None:
            if getattr(event, "tool", None) == "shell":
                started.set()

        turn = asyncio.ensure_future(runtime.run("edit then wait", emit))
        await asyncio.wait_for(started.wait(), 20)
        with pytest.raises(TurnInProgress, match="undo after it ends"):
            await runtime.undo_turn()
        assert (workspace / "app.py").read_text() == "a = 2\n"
        runtime.cancel()
        summary = await turn
        assert summary.status.value == "cancelled"
        result = await runtime.undo_turn()
        assert result["files"] == [{"path": "app.py", "action": "restored"}]
        assert (workspace / "app.py").read_text() == "a = 1\n"
    finally:
        runtime.close()


async def test_nothing_to_undo_and_an_unknown_turn(workspace: Path) -> None:
    runtime = runtime_with(workspace, {"text": "no files"})
    try:
        with pytest.raises(UndoRefused, match="nothing to undo"):
            await runtime.undo_turn()
        summary = await runtime.run("talk", lambda e: None)
        with pytest.raises(UndoRefused, match="no file changes"):
            await runtime.undo_turn(summary.turn_id)
        with pytest.raises(KeyError):
            await runtime.undo_turn("no-such-turn")
    finally:
        runtime.close()


async def test_a_refused_edit_or_a_change_made_and_taken_back_leaves_nothing_to_undo(workspace: Path) -> None:
    (workspace / "app.py").write_text("a = 1\n")
    runtime = runtime_with(
        workspace,
        call("write", file_path="refused.py", content="x\n"),
        call("patch", file_path="app.py", old_string="a = 1", new_string="a = 2"),
        call("patch", file_path="app.py", old_string="a = 2", new_string="a = 1"),
        {"text": "done"},
    )

    class Refusing(DiskFiles):
        async def write_text(self, path: Path, content: str, tool: str | None = None) -> None:
            if path.name == "refused.py":
                raise ToolFailure("the user rejected the edit to refused.py")
            await super().write_text(path, content, tool)

    runtime.session.files = Refusing()
    try:
        summary = await runtime.run("edit", lambda e: None)
        assert summary.failures == 1 and not (workspace / "refused.py").exists()
        assert TurnFiles(runtime.store).files(summary.turn_id) == []
        assert runtime.list_conversations()[0]["turnFiles"] == []
    finally:
        runtime.close()


async def test_a_turn_whose_server_died_midway_is_undone_after_the_restart(workspace: Path) -> None:
    """Each change is recorded before it is made: a server killed in the turn leaves a turn that can be undone."""
    from forge_lsp.core.turn_undo import TurnChanges
    from forge_lsp.tools.workspace import Workspace

    (workspace / "app.py").write_text("a = 1\n")
    store = StateStore(workspace, trusted=True)
    store.start_turn("t-killed", store.current_conversation(), "edit")
    changes = TurnChanges(TurnFiles(store), Workspace(workspace), "t-killed")
    changes.before(workspace / "app.py", "a = 1\n")
    (workspace / "app.py").write_text("a = 2\n")
    changes.after(workspace / "app.py", "a = 2\n")
    store._db.close()  # the server is killed in a later tool call: not close(), and no finish_turn
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        assert runtime.store.turn_status("t-killed") == "failed"
        assert runtime.list_conversations()[0]["turnFiles"][0]["files"] == [{"path": "app.py", "action": "changed"}]
        assert (await runtime.undo_turn())["files"] == [{"path": "app.py", "action": "restored"}]
        assert (workspace / "app.py").read_text() == "a = 1\n"
    finally:
        runtime.close()


def test_an_older_state_file_gains_the_table_and_keeps_its_rows(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    cid = store.current_conversation()
    store.close()
    db = sqlite3.connect(tmp_path / ".forge" / "state.sqlite3")
    db.execute("DROP TABLE turn_files")
    db.commit()
    db.close()
    again = StateStore(tmp_path)
    try:
        assert again.current_conversation() == cid
        columns = [r[1] for r in again._db.execute("PRAGMA table_info(turn_files)")]
        assert columns == COLUMNS["turn_files"]
    finally:
        again.close()


def test_old_snapshots_are_pruned_and_deleted_with_their_conversation(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    try:
        table = TurnFiles(store)
        cid = store.current_conversation()
        for i in range(5):
            store.start_turn(f"t{i}", cid, "x")
            table.first_change(f"t{i}", "a.txt", b"%d" % i, digest("x"))
        table.prune(keep=2)
        assert [t for t in (f"t{i}" for i in range(5)) if table.files(t)] == ["t3", "t4"]
        assert table.last_turn() == "t4"
        store.delete_conversation(cid)
        assert table.files("t4") == [] and table.last_turn() is None
    finally:
        store.close()


def test_the_digest_ignores_one_final_newline_only() -> None:
    assert digest("a\n") == digest("a") != digest("a\n\n")
    assert digest(b"a\r\n") != digest("a\n") and digest(None) is None


class FailingFiles(DiskFiles):
    """The disk, but removing path fails with failure (as an editor that did not apply the edit answers)."""

    def __init__(self, path: Path, failure: Exception) -> None:
        self.path, self.failure = path, failure

    async def delete(self, path: Path, tool: str | None = None) -> None:
        if path == self.path:
            raise self.failure
        await super().delete(path, tool)


@pytest.mark.parametrize(
    ("failure", "first"),
    [
        (
            ChangedSince("the editor did not apply the edit to new.txt: you changed it since", "new.txt"),
            "new.txt changed since the turn",
        ),
        (OSError("disk full"), "new.txt cannot be written now (see the log)"),
    ],
)
async def test_a_restore_that_fails_midway_is_refused_file_first_and_puts_back_what_it_restored(
    workspace: Path, failure: Exception, first: str, caplog: pytest.LogCaptureFixture
) -> None:
    seed(workspace)
    runtime = runtime_with(workspace, *TURN)
    try:
        summary = await runtime.run("edit", lambda e: None)
        table = TurnFiles(runtime.store)
        with pytest.raises(UndoRefused) as refused:
            await undo_turn(table, runtime.workspace, FailingFiles(workspace / "new.txt", failure), summary.turn_id, True)
        # Short, the file first (a one-line notification still names it); the whole cause in the detail and the log.
        assert str(refused.value) == (
            f"{first}: cannot undo; nothing was restored, and your changes are kept (turn {summary.turn_id})"
        )
        assert refused.value.files == ["new.txt"]
        assert refused.value.detail == f"restoring new.txt failed ({failure}); the files already restored were put back"
        assert refused.value.detail in caplog.text
        # app.py was restored before new.txt failed: put back as the turn left it.
        assert (workspace / "app.py").read_text() == "a = 3\n" and (workspace / "new.txt").exists()
        assert not (workspace / "old.txt").exists()
    finally:
        runtime.close()
