"""SQLite state: resume across processes, unanswered tool calls closed, .forge/.gitignore."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from forge_lsp.domain.messages import ChatMessage, ToolCall
from forge_lsp.state.dirs import ensure_state_dir
from forge_lsp.state.store import INTERRUPTED_RESULT, StateStore

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
