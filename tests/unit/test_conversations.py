"""Conversations a user can find again: list (title from the first prompt), open, delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_lsp.core.errors import TurnInProgress
from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.state.store import StateStore, title_of


def test_title_is_the_first_prompts_first_line() -> None:
    assert title_of("\n  Fix the failing test  \nin tests/") == "Fix the failing test"
    long = title_of("x" * 200)
    assert len(long) == 80 and long.endswith("…")
    assert title_of("") == ""


def test_list_open_and_delete(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    first = store.current_conversation()
    store.start_turn("t1", first, "Fix the bug\nplease")
    store.append(first, "t1", ChatMessage("user", "Fix the bug"))
    store.finish_turn("t1", "completed", {"usage": {"promptTokens": 100, "completionTokens": 5, "cost": "unknown"}})
    store.start_turn("t2", first, "and the docs")
    store.finish_turn("t2", "interrupted", {"usage": {"promptTokens": 200, "completionTokens": 10}})
    second = store.new_conversation()
    listed = store.conversations()
    assert [c["id"] for c in listed] == [second, first]  # the latest first
    one = listed[1]
    assert (one["title"], one["turns"], one["lastStatus"], one["tokens"]) == ("Fix the bug", 2, "interrupted", 315)
    assert one["updated"].endswith("Z") and listed[0]["turns"] == 0 and listed[0]["lastStatus"] is None
    assert store.open_conversation(first) and store.current_conversation() == first
    assert not store.open_conversation("nope")
    assert store.delete_conversation(first)
    assert store.history(first) == [] and [c["id"] for c in store.conversations()] == [second]
    # The current conversation was deleted: the next turn starts a new one.
    assert store.current_conversation() not in (first, second)
    assert not store.delete_conversation(first)


async def test_runtime_opens_a_conversation_the_next_turn_continues(workspace: Path) -> None:
    (workspace / "s.json").write_text(json.dumps({"responses": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}))
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        one = await runtime.run("first conversation", lambda e: None)
        runtime.new_conversation()
        await runtime.run("second conversation", lambda e: None)
        titles = [c["title"] for c in runtime.list_conversations()]
        assert titles == ["second conversation", "first conversation"]
        opened = runtime.open_conversation(one.conversation_id)
        assert opened == {"conversationId": one.conversation_id, "title": "first conversation", "turns": 1}
        again = await runtime.run("continue", lambda e: None)
        assert again.conversation_id == one.conversation_id
        assert [m.content for m in runtime.store.history(one.conversation_id) if m.role == "user"] == [
            "first conversation",
            "continue",
        ]
        with pytest.raises(KeyError):
            runtime.open_conversation("missing")
        assert runtime.delete_conversation(one.conversation_id)["deleted"] is True
        assert [c["title"] for c in runtime.list_conversations()] == ["second conversation"]
    finally:
        runtime.close()


async def test_delete_is_refused_while_a_turn_runs_in_another_process(workspace: Path) -> None:
    runtime = WorkspaceRuntime(workspace, trusted=True)
    other = StateStore(workspace)
    try:
        cid = runtime.store.current_conversation()
        assert other.turn_lock.acquire("t-other") is None  # another process's turn holds the lock
        with pytest.raises(TurnInProgress, match="t-other"):
            runtime.delete_conversation(cid)
        other.turn_lock.release()
        assert runtime.delete_conversation(cid)["deleted"]
    finally:
        other.close()
        runtime.close()
