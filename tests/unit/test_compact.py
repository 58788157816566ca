"""Forge's compaction: the eviction range, the summary frame, the view, and a long conversation compacted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core import compaction as compact
from forge_lsp.core.compaction import Compactor
from forge_lsp.domain.config import CompactConfig, ForgeConfig, check_key, trust_reason
from forge_lsp.domain.events import Compacted
from forge_lsp.domain.messages import ChatMessage, Compaction, ToolCall
from forge_lsp.domain.tokens import estimate_tokens
from forge_lsp.state.store import StateStore
from forge_lsp.templates import TemplateEngine

from fakes import FakeModel, Harness, answer

HEADER = (
    "Use the following summary frames as the authoritative reference for all coding suggestions and decisions. "
    "Do not re-explain or revisit it unless I ask. Additional summary frames will be added as the conversation "
    "progresses.\n\n## Summary\n\n"
)
FOOTER = "\n---\n\nProceed with implementation based on this context.\n"


def pattern(p: str) -> list[dict[str, Any]]:
    """Forge's test DSL: s system, u user, a assistant, t assistant with a tool call, r a tool result."""
    out: list[dict[str, Any]] = []
    for ch in p:
        if ch == "s":
            out.append({"role": "system", "content": "sys"})
        elif ch == "u":
            out.append({"role": "user", "content": "usr"})
        elif ch == "a":
            out.append({"role": "assistant", "content": "ast"})
        elif ch == "t":
            out.append({"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "x"}}]})
        elif ch == "r":
            out.append({"role": "tool", "content": "res", "tool_call_id": "c"})
    return out


def seq(p: str, retain: int) -> str:
    found = compact.sequence_preserving_last(pattern(p), retain)
    if found is None:
        return p
    start, end = found
    return p[:start] + "[" + p[start : end + 1] + "]" + p[end + 1 :]


@pytest.mark.parametrize(
    ("p", "retain", "expected"),
    [
        ("suaaau", 0, "su[aaau]"),
        ("sua", 0, "su[a]"),
        ("suttu", 0, "su[ttu]"),
        ("sutraau", 0, "su[traau]"),
        ("utrutru", 0, "u[trutru]"),
        ("urru", 0, "urru"),
        ("suaaaauaa", 3, "su[aaaa]uaa"),
        ("suaaaauaa", 5, "su[aa]aauaa"),
        ("suaaaauaa", 8, "suaaaauaa"),
        ("suauaaa", 2, "su[aua]aa"),
        ("sutrtrtra", 1, "su[trtrtr]a"),
        ("sutrtrtra", 2, "su[trtr]tra"),
        ("sutrtrtrra", 2, "su[trtr]trra"),
        ("sutrtrtrra", 3, "su[trtr]trra"),
        ("sutrrtrrtrra", 5, "su[trr]trrtrra"),
        ("sutrrrrrra", 2, "sutrrrrrra"),
        ("suauauaua", 6, "su[a]uauaua"),
        ("sutruaua", 3, "su[tru]aua"),
        ("suaut", 0, "su[au]t"),
        ("", 0, ""),
        ("ut", 0, "ut"),
        ("suuu", 0, "suuu"),
        ("ua", 0, "u[a]"),
    ],
)
def test_eviction_range_as_forge_finds_it(p: str, retain: int, expected: str) -> None:
    assert seq(p, retain) == expected


def test_triggers() -> None:
    c = CompactConfig(token_threshold=100, message_threshold=0)
    assert compact.should_compact(c, pattern("ua"), 100) and not compact.should_compact(c, pattern("ua"), 99)
    assert compact.should_compact(CompactConfig(token_threshold=0, message_threshold=3), pattern("uau"), 0)
    assert not compact.should_compact(CompactConfig(token_threshold=0, message_threshold=0), pattern("uauau" * 50), 0)
    turns = CompactConfig(token_threshold=0, message_threshold=0, turn_threshold=2)
    assert compact.should_compact(turns, pattern("uau"), 0) and not compact.should_compact(turns, pattern("ua"), 0)
    end = CompactConfig(token_threshold=0, message_threshold=0, on_turn_end=True)
    assert compact.should_compact(end, pattern("au"), 0) and not compact.should_compact(end, pattern("ua"), 0)


def test_eviction_window_bounds_the_share_summarized() -> None:
    messages = pattern("s" + "ua" * 50)
    # 101 tokens (one a message): 20 % is 21 tokens, 21 messages after the system prompt may go.
    assert compact.eviction_retention(messages, 0.2) == 79
    assert compact.eviction_retention(messages, 1.0) == 0
    assert compact.eviction_retention(messages, 0.0) == len(messages)
    start, end = compact.eviction_range(CompactConfig(retention_window=6), messages)  # type: ignore[misc]
    assert (start, end) == (2, 21)
    assert compact.eviction_range(CompactConfig(retention_window=6), messages, whole=True) == (2, 94)


def test_compact_keys_are_checked_and_safe_in_an_untrusted_workspace() -> None:
    assert check_key("compact.eviction_window", 0.5) == 0.5
    with pytest.raises(ValueError, match="between 0.0 and 1.0"):
        check_key("compact.eviction_window", 1.5)
    with pytest.raises(ValueError):
        check_key("compact.retention_window", -1)
    with pytest.raises(ValueError):
        check_key("compact.on_turn_end", "yes")
    for key in ("retention_window", "eviction_window", "max_tokens", "token_threshold", "message_threshold", "on_turn_end"):
        assert trust_reason(f"compact.{key}", 1) is None


def engine(tmp_path: Path) -> TemplateEngine:
    return TemplateEngine(tmp_path)


def call(cid: str, name: str, **args: Any) -> ToolCall:
    return ToolCall(cid, name, json.dumps(args))


def test_summary_frame_renders_as_forge_renders_it(tmp_path: Path) -> None:
    # Forge's snapshot template_engine_renders_summary_frame (its semantic-search step left out: no such tool here).
    history = [
        ChatMessage("user", "Please read the config file"),
        ChatMessage("assistant", None, (call("1", "read", file_path="config.toml"),)),
        ChatMessage("tool", "ok", tool_call_id="1", name="read"),
        ChatMessage("user", "Now update the version number"),
        ChatMessage("assistant", None, (call("2", "patch", file_path="Cargo.toml", old_string="a", new_string="b"),)),
        ChatMessage("tool", "ok", tool_call_id="2", name="patch"),
        ChatMessage("user", "Search for TODO comments"),
        ChatMessage("assistant", None, (call("3", "fs_search", pattern="TODO"),)),
        ChatMessage("tool", "ok", tool_call_id="3", name="fs_search"),
        ChatMessage("assistant", None, (call("4", "shell", command="cargo test"),)),
        ChatMessage("tool", "ok", tool_call_id="4", name="shell"),
        ChatMessage("user", "Great! Everything looks good."),
    ]
    data = compact.summary_data(history)
    # Two assistant messages in a row (tool results between them) are one block in Forge's summary.
    assert [b["role"] for b in data["messages"]] == ["User", "Assistant", "User", "Assistant", "User", "Assistant", "User"]
    summary = engine(tmp_path).render("forge-partial-summary-frame.md", data)
    expected = (
        HEADER
        + (
            "### 1. User\n\n````\nPlease read the config file\n````\n\n"
            "### 2. Assistant\n\n**Read:** `config.toml`\n\n"
            "### 3. User\n\n````\nNow update the version number\n````\n\n"
            "### 4. Assistant\n\n**Update:** `Cargo.toml`\n\n"
            "### 5. User\n\n````\nSearch for TODO comments\n````\n\n"
            "### 6. Assistant\n\n**Search:** `TODO`\n**Execute:** \n```\ncargo test\n```\n\n"
            "### 7. User\n\n````\nGreat! Everything looks good.\n````\n\n"
        )
        + FOOTER
    )
    assert summary == expected


def test_summary_frame_task_plan_as_forge(tmp_path: Path) -> None:
    todos = [
        {"content": "Implement user authentication", "status": "completed"},
        {"content": "Add database migrations", "status": "in_progress"},
        {"content": "Write documentation", "status": "pending"},
    ]
    history = [ChatMessage("user", "Create a task plan"), ChatMessage("assistant", None, (call("1", "todo_write", todos=todos),))]
    summary = engine(tmp_path).render("forge-partial-summary-frame.md", compact.summary_data(history))
    assert (
        summary
        == HEADER
        + (
            "### 1. User\n\n````\nCreate a task plan\n````\n\n"
            "### 2. Assistant\n\n**Task Plan:**\n- [x] ~~Implement user authentication~~\n- [~] Add database migrations\n"
            "- [ ] Write documentation\n\n"
        )
        + FOOTER
    )


def test_summary_is_cut_to_max_tokens_oldest_first() -> None:
    history = [ChatMessage("user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 400) for i in range(40)]
    data = compact.fit_summary(compact.summary_data(history), 500)
    texts = [c["text"] for b in data["messages"] for c in b["contents"]]
    assert sum(len(t) for t in texts) <= 500 * 4 and texts[-1].startswith("message 39 ")


def test_view_keeps_the_last_reasoning_of_a_compacted_range() -> None:
    history = [
        ChatMessage("user", "M1"),
        ChatMessage("assistant", "R1", reasoning="first thought"),
        ChatMessage("user", "M2"),
        ChatMessage("assistant", "R2", reasoning="last thought"),
        ChatMessage("user", "M3"),
        ChatMessage("assistant", "R3"),
    ]
    messages, origin = compact.view(history, [Compaction(1, 3, "SUMMARY")])
    assert [m.content for m in messages] == ["M1", "SUMMARY", "M3", "R3"]
    assert origin == [0, None, 4, 5]
    assert messages[3].reasoning == "last thought" and messages[3].to_dict()["reasoning_content"] == "last thought"
    # A stored range that does not fit the history (a hand-edited state file) is ignored.
    assert compact.view(history, [Compaction(4, 99, "X")])[0] == history


def long_history(n: int) -> list[ChatMessage]:
    """A conversation of about n messages: prompts, tool batches of two calls, answers."""
    out = [ChatMessage("user", "Start: make the tests pass")]
    i = 0
    while len(out) < n - 4:
        calls = (call(f"c{i}a", "read", file_path=f"src/m{i}.py"), call(f"c{i}b", "shell", command=f"pytest -k t{i}"))
        out.append(ChatMessage("assistant", f"Step {i}: looking", calls, reasoning=f"thinking {i}"))
        out.append(ChatMessage("tool", "x" * 300, tool_call_id=f"c{i}a", name="read"))
        out.append(
            ChatMessage("tool", "<tool_call_error><cause>exit 1</cause></tool_call_error>", tool_call_id=f"c{i}b", name="shell")
        )
        if i % 5 == 4:
            out.append(ChatMessage("assistant", f"Done step {i}"))
            out.append(ChatMessage("user", f"Continue with {i + 1}"))
        i += 1
    return out


def assert_tool_calls_answered(messages: list[dict[str, Any]]) -> None:
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(calls) == sorted(results)
    # Each result follows its call's assistant message, with only results between them.
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            j = i
            while messages[j]["role"] == "tool":
                j -= 1
            assert m["tool_call_id"] in {c["id"] for c in messages[j].get("tool_calls") or ()}


async def test_a_500_message_conversation_compacts_under_the_threshold(workspace: Path) -> None:
    threshold = 3000
    config = replace(ForgeConfig(), compact=CompactConfig(token_threshold=threshold, message_threshold=0))
    model = FakeModel([answer("All green.")])
    h = Harness(workspace, model, config)
    h.orchestrator()
    cid = h.store.current_conversation()
    history = long_history(500)
    assert len(history) >= 495
    for m in history:
        h.store.append(cid, "old", m)
    before = estimate_tokens(m.to_dict() for m in history)
    assert before > 5 * threshold
    summary = await h.run("and now?")
    assert summary.status.value == "completed"
    (event,) = [e for e in h.events if isinstance(e, Compacted)]
    sent = model.requests[0]
    assert estimate_tokens(sent) < threshold
    assert event.after_tokens == estimate_tokens(sent) and event.before_tokens > 5 * threshold
    assert event.messages > 400
    assert_tool_calls_answered(sent)
    assert sent[-1] == {"role": "user", "content": "and now?"}
    summaries = [m for m in sent if m["role"] == "user" and m["content"].startswith(HEADER[:40])]
    assert summaries and "**Execute:** \n```\npytest -k t" in summaries[-1]["content"]
    # The last reasoning of what was summarized rides on the first assistant message after it.
    first_assistant = next(m for m in sent if m["role"] == "assistant")
    assert first_assistant.get("reasoning_content", "").startswith("thinking ")
    # The record is whole: every message, as it was, and the new ones after.
    stored = h.store.history(cid)
    assert stored[: len(history)] == history
    assert [m.content for m in stored[len(history) :]] == ["and now?", "All green."]
    # The next turn starts from the same compacted view (the compaction is recorded), no new one needed.
    model.replies.append(answer("Still green."))
    h.events.clear()
    await h.run("again?")
    assert not [e for e in h.events if isinstance(e, Compacted)]
    assert estimate_tokens(model.requests[1]) < threshold
    assert model.requests[1][: len(sent)] == sent


def test_forced_compaction_keeps_retention_window(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    cid = store.current_conversation()
    history = long_history(60)
    compactor = Compactor(CompactConfig(retention_window=6), engine(tmp_path), store)
    result = compactor.run(cid, [], history, [], force=True)
    assert result is not None
    assert len(result.wire) <= 1 + 1 + 6 + 2  # the first prompt, the summary, the kept tail (a batch is never split)
    assert_tool_calls_answered(result.wire)
    assert store.compactions(cid) == result.compactions
    # Nothing more to compact: None.
    assert compactor.run(cid, [], history, result.compactions, force=True) is None


def test_every_trigger_off_never_compacts(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    cid = store.current_conversation()
    off = CompactConfig(token_threshold=0, message_threshold=0, turn_threshold=0, on_turn_end=False)
    assert Compactor(off, engine(tmp_path), store).run(cid, [], long_history(600), []) is None
    assert store.compactions(cid) == []
    # forge.compact still compacts on demand.
    assert Compactor(off, engine(tmp_path), store).run(cid, [], long_history(600), [], force=True) is not None


async def test_a_small_token_threshold_compacts_down_to_the_eviction_window_not_on_every_request(workspace: Path) -> None:
    """Hysteresis: a compaction brings what is sent to (1 - eviction_window) of the threshold, so the requests
    after it have room to grow before the next one, instead of each request compacting again."""
    from fakes import call as fake_call
    from fakes import tools

    threshold, window = 3000, 0.2
    for i in range(40):
        (workspace / f"f{i}.txt").write_text(f"line {i} " * 50)
    replies = [tools(fake_call("read", f"r{i}", file_path=f"f{i}.txt")) for i in range(40)] + [answer("done")]
    config = replace(ForgeConfig(), compact=CompactConfig(token_threshold=threshold, eviction_window=window, message_threshold=0))
    h = Harness(workspace, FakeModel(replies), config)
    summary = await h.run("read them all")
    assert summary.status.value == "completed" and summary.requests == 41
    events = [e for e in h.events if isinstance(e, Compacted)]
    assert events, "the threshold was passed: compaction ran"
    for event in events:
        assert event.after_tokens <= (1 - window) * threshold, (event.before_tokens, event.after_tokens)
    # Each read adds about 120 tokens. Brought just under the threshold (2606 of 3000), the context passed it
    # again within 3 requests: 5 compactions in the last 16 requests. Now there is room for many more.
    assert len(events) <= 2, [(e.before_tokens, e.after_tokens) for e in events]
    assert all(estimate_tokens(sent) < threshold for sent in h.model.requests)
