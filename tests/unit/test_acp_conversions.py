"""ACP conversions: a stored conversation as session updates, pure (no connection, no runtime); the plan it restores."""

from __future__ import annotations

import json
from pathlib import Path

from acp import resource_link_block, text_block

from forge_lsp.acp.conversions import history_updates, prompt_text, tool_title
from forge_lsp.core.session import Session
from forge_lsp.domain.messages import ChatMessage, ToolCall
from forge_lsp.tools.base import DiskFiles


def todo_call(call_id: str, *todos: tuple[str, str]) -> ToolCall:
    args = {"todos": [{"content": c, "status": s} for c, s in todos]}
    return ToolCall(id=call_id, name="todo_write", arguments_json=json.dumps(args))


def test_history_is_the_updates_in_order_and_the_last_plan_that_was_set() -> None:
    root = Path("/ws")
    history = [
        ChatMessage(role="user", content="plan it"),
        ChatMessage(
            role="assistant",
            content="on it",
            reasoning="thinking",
            tool_calls=(
                todo_call("t1", ("one", "pending")),
                ToolCall(id="r1", name="read", arguments_json='{"file_path": "a.py", "start_line": 3}'),
            ),
        ),
        ChatMessage(role="tool", content="ok", tool_call_id="t1"),
        ChatMessage(role="tool", content="<tool_call_error>no</tool_call_error>", tool_call_id="r1"),
        ChatMessage(role="assistant", content=None, tool_calls=(todo_call("t2", ("two", "cancelled")),)),
        ChatMessage(role="tool", content="<tool_call_error>bad</tool_call_error>", tool_call_id="t2"),
    ]
    updates = history_updates(history, root)
    kinds = [u.session_update for u in updates]
    assert kinds == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call",
        "tool_call_update",
        "plan",
        "tool_call_update",
        "tool_call",
        "tool_call_update",
    ]
    read = updates[4]
    assert read.kind == "read" and read.locations is not None
    assert read.locations[0].path == str(root / "a.py") and read.locations[0].line == 3
    assert [u.status for u in updates if u.session_update == "tool_call_update"] == ["completed", "failed", "failed"]
    assert Session(None, DiskFiles()).restore_todos(history) == [{"content": "one", "status": "pending"}]  # t2 failed
    plan = updates[6]
    assert [(e.content, e.status) for e in plan.entries] == [("one", "pending")]


def test_no_todo_write_means_no_plan() -> None:
    history = [ChatMessage(role="user", content="hi")]
    updates = history_updates(history, Path("/ws"))
    assert len(updates) == 1 and Session(None, DiskFiles()).restore_todos(history) == []


def test_prompt_text_joins_text_and_says_what_it_cannot_read() -> None:
    text = prompt_text([text_block("fix it"), resource_link_block("a.py", "file:///ws/a.py")])
    assert text == "fix it\n\n(See file:///ws/a.py.)"


def test_a_calls_title_is_its_command_pattern_or_url_in_backticks() -> None:
    assert tool_title("shell", json.dumps({"command": "npm test\nnpm run lint"}), "shell: npm test") == "`npm test`"
    assert tool_title("fs_search", json.dumps({"pattern": "TODO"}), "fs_search: TODO") == "`TODO`"
    assert (
        tool_title("fetch", json.dumps({"url": "https://example.com"}), "fetch: https://example.com") == "`https://example.com`"
    )
    # A backtick in it would break the code span: the described title then; other tools keep theirs.
    assert tool_title("shell", json.dumps({"command": "echo `date`"}), "shell: echo `date`") == "shell: echo `date`"
    assert tool_title("read", json.dumps({"file_path": "a.py"}), "read: a.py") == "read: a.py"
    assert tool_title("shell", "not json", "shell") == "shell"
