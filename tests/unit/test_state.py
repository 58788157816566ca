"""SQLite state: resume across processes, unanswered tool calls closed, .forge/.gitignore."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from forge_lsp.domain.messages import ChatMessage, ToolCall
from forge_lsp.state.store import INTERRUPTED_RESULT, StateStore


def test_new_store_resumes_the_conversation(workspace: Path) -> None:
    a = StateStore(workspace)
    cid = a.current_conversation()
    a.append(cid, "t1", ChatMessage("user", "hello"))
    a.append(cid, "t1", ChatMessage("assistant", "hi"))
    a.close()
    b = StateStore(workspace)
    assert b.current_conversation() == cid
    assert [(m.role, m.content) for m in b.history(cid)] == [("user", "hello"), ("assistant", "hi")]
    assert (workspace / ".forge" / ".gitignore").read_text() == "*\n"
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
