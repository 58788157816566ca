"""Loops the failure tracker cannot see (issue 37 section 3): the same call (same tool, same normalized
arguments) or the same sequence of calls, repeated with success after success, interrupts the turn at
max_repeated_calls_per_turn; the call that reaches the limit is not run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from forge_lsp.acp.conversions import history_updates
from forge_lsp.config import ConfigLoader
from forge_lsp.core.compaction import summary_data
from forge_lsp.core.orchestrator import TurnRequest
from forge_lsp.core.session import Session
from forge_lsp.domain import doom_loop
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import MaxRepeatedCallsReached, TurnStatus
from forge_lsp.domain.messages import ChatMessage, ToolCall

from fakes import FakeModel, Harness, answer, call, tools

LOG = "echo run >> log.txt"
# The same shell call as a model may format it: spacing, newlines and key order differ, the call does not.
FORMATS = (
    '{"command": "echo run >> log.txt", "description": "log a run"}',
    '{ "command" : "echo run >> log.txt" , "description" : "log a run" }',
    '{"description":"log a run","command":"echo run >> log.txt"}',
    '{\n  "description": "log a run",\n  "command": "echo run >> log.txt"\n}',
    '{"command":"echo run >> log.txt",\t"description":"log a run"}',
    '{ "description": "log a run", "command": "echo run >> log.txt" }',
    '{"command":   "echo run >> log.txt", "description": "log a run"}',
)


def raw(name: str, arguments: str, i: int) -> ToolCall:
    return ToolCall(f"call-{i}", name, arguments)


def runs(root: Path) -> int:
    """How many of the logging shell calls ran."""
    log = root / "log.txt"
    return len(log.read_text().splitlines()) if log.exists() else 0


def tool_messages(request: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in request if m["role"] == "tool"]


def assert_interrupted_at_six(h: Harness, summary: object, tool: str = "shell") -> None:
    assert summary.status is TurnStatus.INTERRUPTED  # type: ignore[attr-defined]
    assert summary.to_dict()["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 6, "tool": tool}  # type: ignore[attr-defined]
    (interrupt,) = h.of("interrupt")
    assert interrupt.to_dict()["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 6, "tool": tool}
    assert [e.type for e in h.events][-2:] == ["interrupt", "turnFinished"]


async def test_byte_identical_repeats_are_stopped_at_the_limit_and_the_last_is_not_run(workspace: Path) -> None:
    model = FakeModel([tools(call("shell", f"c{i}", command=LOG)) for i in range(8)] + [answer("never asked")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert_interrupted_at_six(h, summary)
    assert runs(workspace) == 5  # the sixth call was not run
    assert len(model.requests) == 6  # and the model is not asked again
    assert (summary.requests, summary.tool_calls, summary.failures) == (6, 6, 0)
    # The reminder came first (at 3), as before; the hard stop is what follows an ignored reminder.
    assert [r.kind for r in h.of("reminder")] == ["doomLoop"]
    history = h.store.history(summary.conversation_id)
    assert history[-1].role == "tool" and history[-1].tool_call_id == "c5"
    assert history[-1].content.startswith("<tool_call_error><cause>not run: the same shell call was made 6 times in a row")
    finished = h.of("toolCallFinished")
    assert [f.ok for f in finished] == [True] * 5 + [False] and finished[-1].output == history[-1].content
    assert summary.reason.describe() == (
        "Repeated call limit (6) reached for this turn: shell was called 6 times in a row with the same arguments; "
        "the last shell call was not run"
    )


async def test_reformatted_repeats_count_as_the_same_call(workspace: Path) -> None:
    model = FakeModel([tools(raw("shell", text, i)) for i, text in enumerate(FORMATS)] + [answer("never asked")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert_interrupted_at_six(h, summary)
    assert runs(workspace) == 5
    # The reminder sees them as the same call too, at the third.
    (reminder,) = h.of("reminder")
    assert "same tool call 3 times" in reminder.text
    assert "<system_reminder>" in str(model.requests[3][-1]["content"])


async def test_the_reminder_sees_reformatted_repeats_as_the_same_call(workspace: Path) -> None:
    model = FakeModel([tools(raw("shell", text, i)) for i, text in enumerate(FORMATS[:3])] + [answer("stopping")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    (reminder,) = h.of("reminder")
    assert reminder.kind == "doomLoop" and "same tool call 3 times" in reminder.text
    assert "<system_reminder>" in str(model.requests[3][-1]["content"])


async def test_a_loop_of_two_alternating_calls_is_stopped(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    pair = [
        tools(call("shell", f"s{i}", command=LOG)) if i % 2 == 0 else tools(call("read", f"r{i}", file_path="a.txt"))
        for i in range(14)
    ]
    h = Harness(workspace, FakeModel([*pair, answer("never asked")]))
    summary = await h.run()
    assert_interrupted_at_six(h, summary, tool="read")
    # shell, read six times over: the twelfth call (the sixth read) is the one not run.
    assert runs(workspace) == 6 and summary.requests == 12
    assert summary.reason.describe() == (
        "Repeated call limit (6) reached for this turn: the same 2 calls (shell, read) were made 6 times in a row; "
        "the last read call was not run"
    )
    history = h.store.history(summary.conversation_id)
    assert history[-1].content.startswith(
        "<tool_call_error><cause>not run: the same sequence of calls (shell, read) was made 6 times in a row"
    )


async def test_the_limit_reached_inside_one_reply_runs_the_calls_before_it(workspace: Path) -> None:
    batch = tools(*(call("shell", f"b{i}", command=LOG) for i in range(8)))
    h = Harness(workspace, FakeModel([batch, answer("never asked")]))
    summary = await h.run()
    assert_interrupted_at_six(h, summary)
    assert runs(workspace) == 5 and summary.tool_calls == 8
    # Every call of the reply has its result (the conversation stays valid for Continue): the rest say why.
    results = [m for m in h.store.history(summary.conversation_id) if m.role == "tool"]
    assert [m.tool_call_id for m in results] == [f"b{i}" for i in range(8)]
    assert results[5].content.startswith("<tool_call_error><cause>not run: the same shell call was made 6 times")
    assert results[6].content == results[7].content and results[6].content.startswith(
        "<tool_call_error><cause>not run: an earlier call"
    )


async def test_different_calls_in_between_start_the_count_over(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    same = [tools(call("shell", f"s{i}", command=LOG)) for i in range(5)]
    other = tools(call("read", "r", file_path="a.txt"))
    h = Harness(workspace, FakeModel([*same, other, *same, answer("done")]))
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED and runs(workspace) == 10


async def test_zero_turns_the_hard_stop_off(workspace: Path) -> None:
    model = FakeModel([tools(call("shell", f"c{i}", command=LOG)) for i in range(9)] + [answer("done")])
    h = Harness(workspace, model, replace(ForgeConfig(), max_repeated_calls_per_turn=0))
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED and summary.reason is None
    assert runs(workspace) == 9
    assert [r.kind for r in h.of("reminder")] == ["doomLoop"] * 3  # the reminder alone, at 3, 6 and 9


async def test_a_tighter_limit_stops_before_the_reminder(workspace: Path) -> None:
    model = FakeModel([tools(call("shell", f"c{i}", command=LOG)) for i in range(3)] + [answer("never asked")])
    h = Harness(workspace, model, replace(ForgeConfig(), max_repeated_calls_per_turn=2))
    summary = await h.run()
    assert summary.to_dict()["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 2, "tool": "shell"}
    assert runs(workspace) == 1 and h.of("reminder") == []


async def test_continue_after_the_interrupt_goes_on_with_a_fresh_count(workspace: Path) -> None:
    same = [tools(call("shell", f"c{i}", command=LOG)) for i in range(6)]
    model = FakeModel([*same, tools(call("shell", "again", command=LOG)), answer("Logged six runs.")])
    h = Harness(workspace, model)
    first = await h.run()
    assert first.status is TurnStatus.INTERRUPTED and runs(workspace) == 5
    orchestrator = h.orchestrator()
    second = await orchestrator.run(TurnRequest("t2", first.conversation_id, "Continue."), h.events.append)
    assert second.status is TurnStatus.COMPLETED and second.text == "Logged six runs."
    # The new turn counts from zero: its first call (the same one again) runs.
    assert runs(workspace) == 6
    # The model was sent a result for every call, the one not run included, and the reminder again.
    sent = model.requests[6]
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert calls == [m["tool_call_id"] for m in tool_messages(sent)]
    assert tool_messages(sent)[-1]["content"].startswith("<tool_call_error><cause>not run:")


async def test_the_same_calls_in_turn_after_turn_are_no_loop(workspace: Path) -> None:
    """The user asks again ("run the tests"), the model makes the same calls again: each turn counts its own calls,
    so no reminder tells the model it is looping (counted over the conversation, one came from the third turn on,
    before any call of it)."""
    turn = [tools(call("shell", "s", command=LOG)), tools(call("read", "r", file_path="log.txt")), answer("Ran them.")]
    model = FakeModel([*turn, *turn, *turn, *turn])
    h = Harness(workspace, model)
    first = await h.run()
    orchestrator = h.orchestrator()
    for n in (2, 3, 4):
        again = await orchestrator.run(TurnRequest(f"t{n}", first.conversation_id, "run the tests"), h.events.append)
        assert again.status is TurnStatus.COMPLETED and again.text == "Ran them."
    assert runs(workspace) == 4
    assert h.of("reminder") == []
    assert not any("<system_reminder>" in str(m.get("content")) for request in model.requests for m in request)


def test_signatures_compare_parsed_arguments() -> None:
    a = ToolCall("1", "write", '{"file_path": "a.py", "content": "x = 1\\n"}')
    b = ToolCall("2", "write", '{ "content" : "x = 1\\n",\n "file_path" : "a.py" }')
    c = ToolCall("3", "write", '{"file_path": "a.py", "content": "x = 2\\n"}')
    assert doom_loop.signature(a) == doom_loop.signature(b) != doom_loop.signature(c)
    assert doom_loop.signature(a) != doom_loop.signature(ToolCall("4", "patch", a.arguments_json))
    # Not JSON: compared as the text it is (one character apart is another call).
    assert doom_loop.signature(ToolCall("5", "shell", '{"command": ')) == doom_loop.signature(
        ToolCall("6", "shell", '{"command": ')
    )
    assert doom_loop.signature(ToolCall("5", "shell", '{"command": ')) != doom_loop.signature(
        ToolCall("6", "shell", '{"command":')
    )
    # No arguments and an empty object are the same call.
    assert doom_loop.signature(ToolCall("7", "todo_read", "")) == doom_loop.signature(ToolCall("8", "todo_read", "{ }"))
    # A write of megabytes is kept as a digest, and still compared by its parsed arguments.
    big = '{"file_path": "a", "content": "%s"}' % ("x" * 100_000)
    big2 = '{ "content": "%s", "file_path": "a" }' % ("x" * 100_000)
    sig = doom_loop.signature(ToolCall("9", "write", big))
    assert sig == doom_loop.signature(ToolCall("10", "write", big2)) and len(sig[1]) < 100


def test_the_window_follows_the_limit() -> None:
    """A limit above the reminder's window still sees a pattern of the longest size repeat that often."""
    calls = [ToolCall(f"{i}", f"tool{i % 8}", "{}") for i in range(8 * 10)]
    history = [ChatMessage("assistant", None, tool_calls=(c,)) for c in calls]
    signatures = doom_loop.call_signatures(history, doom_loop.window(10))
    assert doom_loop.repeated_call(signatures, 1, 10) == (0, 8)
    assert doom_loop.repeated_call(signatures[:-1], 1, 10) is None
    assert doom_loop.repeated_call(signatures, 1, 0) is None


def test_the_reason_names_the_tool_on_the_wire_and_the_sequence_in_words() -> None:
    reason = MaxRepeatedCallsReached(6, "write", ("read", "write"))
    assert reason.to_dict() == {"kind": "MaxRepeatedCallsReached", "limit": 6, "tool": "write"}
    assert reason.summary() == "MaxRepeatedCallsReached {limit: 6, tool: write}"
    assert "the same 2 calls (read, write)" in reason.describe()


def config_loader(root: Path, user: str) -> ConfigLoader:
    user_path = root.parent / "user.toml"
    user_path.write_text(user)
    return ConfigLoader(root, user_path)


def test_a_workspace_may_tighten_the_limit_never_loosen_it(workspace: Path) -> None:
    ld = config_loader(workspace, "max_repeated_calls_per_turn = 4\n")
    assert ld.load(trusted=False).config.max_repeated_calls_per_turn == 4
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 10\n")
    eff = ld.load(trusted=False)
    assert eff.config.max_repeated_calls_per_turn == 4
    (problem,) = eff.ignored
    assert problem.key == "max_repeated_calls_per_turn" and problem.line == 1
    assert "10 would loosen your limit; 4 is kept" in problem.message
    # 0 is off: the loosest value of all.
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 0\n")
    eff = ld.load(trusted=False)
    assert eff.config.max_repeated_calls_per_turn == 4 and [p.key for p in eff.ignored] == ["max_repeated_calls_per_turn"]
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 3\n")
    eff = ld.load(trusted=False)
    assert eff.config.max_repeated_calls_per_turn == 3 and eff.ignored == []
    assert eff.sources["max_repeated_calls_per_turn"] == "workspace"


def test_the_user_may_turn_it_off_and_a_workspace_may_turn_it_back_on(workspace: Path) -> None:
    ld = config_loader(workspace, "max_repeated_calls_per_turn = 0\n")
    assert ld.load(trusted=False).config.max_repeated_calls_per_turn == 0
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 8\n")
    assert ld.load(trusted=False).config.max_repeated_calls_per_turn == 8


def test_one_is_refused_with_the_reason(workspace: Path) -> None:
    ld = config_loader(workspace, "")
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 1\n")
    eff = ld.load(trusted=True)
    (problem,) = eff.problems
    assert problem.key == "max_repeated_calls_per_turn" and "0 (off) or at least 2" in problem.message
    assert eff.config.max_repeated_calls_per_turn == 6


def test_the_editor_setting_is_the_key_in_camel_case(workspace: Path) -> None:
    ld = config_loader(workspace, "")
    ld.set_editor({"maxRepeatedCallsPerTurn": 0})  # VS Code's forge.maxRepeatedCallsPerTurn, Neovim's settings
    eff = ld.load(trusted=False)
    assert eff.config.max_repeated_calls_per_turn == 0 and eff.sources["max_repeated_calls_per_turn"] == "editor"


async def test_what_reads_the_history_takes_a_call_not_run_for_one_that_did_not_succeed(workspace: Path) -> None:
    """A resumed ACP session shows it failed, the todo list restored is the last one that was set, and compaction's
    summary marks it unsuccessful: the not-run result is a <tool_call_error> like a failure's."""
    plan_a = call("todo_write", todos=[{"content": "plan A", "status": "pending"}])
    plan_b = call("todo_write", todos=[{"content": "plan B", "status": "pending"}])
    replies = [tools(replace(c, id=f"{c.name}-{i}")) for i, c in enumerate([plan_a, plan_b] * 3)]
    h = Harness(workspace, FakeModel([*replies, answer("never asked")]), replace(ForgeConfig(), max_repeated_calls_per_turn=2))
    summary = await h.run()
    assert summary.to_dict()["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 2, "tool": "todo_write"}
    history = h.store.history(summary.conversation_id)
    assert history[-1].tool_call_id == "todo_write-3"  # plan B, the second time: not run
    session = Session(summary.conversation_id, files=None)  # type: ignore[arg-type]  # (its todos need no files)
    assert session.restore_todos(history) == [{"content": "plan A", "status": "pending"}]
    finished = [u for u in history_updates(history, workspace) if u.session_update == "tool_call_update"]
    assert [u.status for u in finished] == ["completed"] * 3 + ["failed"]
    success = [c["tool_call"]["is_success"] for b in summary_data(history)["messages"] for c in b["contents"] if c["tool_call"]]
    assert success == [True] * 3 + [False]
