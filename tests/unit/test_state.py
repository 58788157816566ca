"""SQLite state: resume across processes, unanswered tool calls closed, .forge/.gitignore."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from forge_lsp.domain.messages import ChatMessage, ToolCall
from forge_lsp.state.dirs import ensure_state_dir
from forge_lsp.state.liveness import boot_id, may_signal
from forge_lsp.state.lock import TurnLock
from forge_lsp.state.store import INTERRUPTED_RESULT, StateStore
from forge_lsp.tools.process import run_process, shell_argv

STATE = [
    "state.sqlite3",
    "state.sqlite3-wal",
    "state.sqlite3-shm",
    "state.sqlite3-journal",
    "state.sqlite3.refused-20260101-000000",
    "state.sqlite3.refused-20260101-000000-wal",
    "state.sqlite3.damaged-20260101-000000-2",
    "transcripts/20260101-000000-abcd.md",
    "turn.lock",
]
YOURS = [".gitignore", "templates/forge-tool-retry-message.md", "fix-port.json", "AGENTS.md"]


def ignored_by_git(root: Path, paths: list[str]) -> list[str]:
    """Which of these paths under root/.forge/ git ignores (a real git repository at root)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in paths:
        (root / ".forge" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / ".forge" / name).touch()
    listed = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--ignored", "-uall"], capture_output=True, text=True, check=True
    ).stdout
    return sorted(line[3:].removeprefix(".forge/") for line in listed.splitlines() if line.startswith("!! "))


def test_forge_gitignore_keeps_only_state_out_of_git(workspace: Path) -> None:
    ensure_state_dir(workspace)
    # The docs put templates and scripts in .forge/ and talk of a git pull changing them: they can be committed.
    assert ignored_by_git(workspace, STATE + YOURS) == sorted(STATE)


def test_the_old_ignore_everything_file_is_rewritten(workspace: Path) -> None:
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / ".gitignore").write_text("*\n")  # what forge-lsp wrote before
    ensure_state_dir(workspace)
    assert ignored_by_git(workspace, STATE + YOURS) == sorted(STATE)


@pytest.mark.parametrize("own", ["*\n!templates/\n", "state.sqlite3\n", ""])
def test_a_gitignore_of_the_users_own_is_left_as_it_is(workspace: Path, own: str) -> None:
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / ".gitignore").write_text(own)
    ensure_state_dir(workspace)
    assert (workspace / ".forge" / ".gitignore").read_text() == own


def test_new_store_resumes_the_conversation(workspace: Path) -> None:
    a = StateStore(workspace)
    cid = a.current_conversation()
    a.append(cid, "t1", ChatMessage("user", "hello"))
    a.append(cid, "t1", ChatMessage("assistant", "hi"))
    a.close()
    b = StateStore(workspace)
    assert b.current_conversation() == cid
    assert [(m.role, m.content) for m in b.history(cid)] == [("user", "hello"), ("assistant", "hi")]
    assert (workspace / ".forge" / ".gitignore").is_file()
    mode = sqlite3.connect(workspace / ".forge" / "state.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_unanswered_tool_calls_get_an_error_result(workspace: Path) -> None:
    s = StateStore(workspace)
    cid = s.current_conversation()
    calls = (ToolCall("a", "shell", "{}"), ToolCall("b", "read", "{}"))
    s.append(cid, "t", ChatMessage("user", "go"))
    s.append(cid, "t", ChatMessage("assistant", None, calls))
    s.append(cid, "t", ChatMessage("tool", "ok", tool_call_id="a", name="shell"))
    history = s.history(cid)
    assert [(m.role, m.tool_call_id) for m in history] == [("user", None), ("assistant", None), ("tool", "a"), ("tool", "b")]
    assert history[-1].content == INTERRUPTED_RESULT


def test_new_conversation_and_running_turns_marked_failed(workspace: Path) -> None:
    s = StateStore(workspace)
    old = s.current_conversation()
    s.start_turn("t1", old, "p")
    assert s.turn_status("t1") == "running"
    s.close()
    s = StateStore(workspace)
    assert s.turn_status("t1") == "failed"
    new = s.new_conversation()
    assert new != old and s.current_conversation() == new and s.history(new) == []


def test_two_workspaces_never_share_state(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sa, sb = StateStore(a), StateStore(b)
    sa.append(sa.current_conversation(), None, ChatMessage("user", "only in a"))
    assert sb.history(sb.current_conversation()) == []


def test_a_running_command_is_recorded_by_the_argv_it_was_started_with(workspace: Path) -> None:
    # bash -c "sleep 300" execs sleep in place: read from /proc while that happens, the command line is bash's,
    # sleep's or empty (the new program's arguments not yet set up), and a reaper holding an empty one would
    # leave the orphan running. The row keeps what was started; the reaper still knows the process by it.
    seen: list[tuple[int, bool, list[str]]] = []
    asyncio.run(run_process("exit 0", workspace, os.environ, 30, watch=lambda pid, up, argv: seen.append((pid, up, list(argv)))))
    assert [(up, argv) for _pid, up, argv in seen] == [(True, shell_argv("exit 0")), (False, shell_argv("exit 0"))]
    assert seen[0][0] == seen[1][0]

    sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)  # as if bash had exec'd it already
    try:
        store = StateStore(workspace)
        store.watch_process(sleeper.pid, True, ["/bin/bash", "-c", "sleep 300"])
        cursor = store._db.execute("SELECT * FROM processes")
        names = [d[0] for d in cursor.description]
        (row,) = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
        store.close()
        assert json.loads(row["cmdline"]) == ["/bin/bash", "-c", "sleep 300"]
        assert may_signal(row, boot_id(), set()) is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_refused_turn_names_a_holder_that_has_not_written_its_name_yet(tmp_path: Path) -> None:
    """The holder takes the flock, then writes who it is: a refusal in that moment waits for the name instead of
    saying "another process" (CI, stop 43: three concurrent `forge-lsp run`)."""
    path = tmp_path / "turn.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # taken, not yet named

        def name_it() -> None:
            os.pwrite(fd, b"pid 4242, turn t-1", 0)

        timer = threading.Timer(0.1, name_it)
        timer.start()
        assert TurnLock(path).acquire("t-2") == "pid 4242, turn t-1"
        timer.join()
    finally:
        os.close(fd)


def test_a_lock_whose_holder_never_names_itself_is_another_process(tmp_path: Path) -> None:
    path = tmp_path / "turn.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert TurnLock(path).acquire("t-2") == "another process"
    finally:
        os.close(fd)


def test_a_holder_writes_its_name_over_a_longer_one_without_leaving_its_tail(tmp_path: Path) -> None:
    path = tmp_path / "turn.lock"
    path.write_text("pid 1234567, turn a-very-long-turn-id-left-behind")
    lock = TurnLock(path)
    assert lock.acquire("t") is None
    assert path.read_text() == f"pid {os.getpid()}, turn t"
    lock.release()
    assert path.read_text() == ""
