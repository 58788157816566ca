"""The turn loop: what the model receives after failures, interrupts, retries, cancellation."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from forge_lsp.domain.config import ForgeConfig, RetryConfig
from forge_lsp.domain.events import TurnStatus
from forge_lsp.domain.retry import ModelError

from fakes import FakeModel, Harness, answer, call, tools

NOTICE = (
    "<retry>Tool call failed\n- **Attempts remaining:** {n}\n- **Next steps:** Analyze the error, identify the root cause, "
    "and adjust your approach before retrying.</retry>"
)


def failing_shell(i: int):  # noqa: ANN201
    return tools(call("shell", f"s{i}", command=f"exit {i}"))


def last_tool_message(request: list[dict]) -> dict:  # type: ignore[type-arg]
    return [m for m in request if m["role"] == "tool"][-1]


async def test_model_sees_exact_notice_after_first_and_second_failure(workspace: Path) -> None:
    model = FakeModel([failing_shell(1), failing_shell(2), answer("giving up")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    first = last_tool_message(model.requests[1])["content"]
    second = last_tool_message(model.requests[2])["content"]
    assert first.startswith("<tool_call_error><cause>command exited with code 1")
    assert "</cause><reflection>You must now deeply reflect" in first
    assert first.endswith("</reflection></tool_call_error>\n" + NOTICE.format(n=2))
    assert second.endswith(NOTICE.format(n=1))
    assert "Attempts remaining:** 2" in first and "Attempts remaining:** 1" in second
    retries = h.of("retry")
    assert [(r.tool, r.attempts_left, r.limit) for r in retries] == [("shell", 2, 3), ("shell", 1, 3)]
    assert retries[0].notice == NOTICE.format(n=2)[len("<retry>") : -len("</retry>")]


async def test_third_failure_interrupts_with_limit_and_errors(workspace: Path) -> None:
    model = FakeModel([failing_shell(1), failing_shell(2), failing_shell(3), answer("never asked")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED
    assert summary.to_dict()["reason"] == {"kind": "MaxToolFailurePerTurnLimitReached", "limit": 3, "errors": {"shell": 3}}
    assert (summary.requests, summary.tool_calls, summary.failures) == (3, 3, 3)
    assert len(model.requests) == 3  # the model is not asked again after the interrupt
    (interrupt,) = h.of("interrupt")
    assert interrupt.to_dict()["reason"] == {"kind": "MaxToolFailurePerTurnLimitReached", "limit": 3, "errors": {"shell": 3}}
    # The batch that hit the limit is still in the history, with its notice (0 left).
    history = h.store.history(summary.conversation_id)
    assert history[-1].role == "tool" and history[-1].content.endswith(NOTICE.format(n=0))
    assert [e.type for e in h.events][-2:] == ["interrupt", "turnFinished"]


async def test_success_in_between_resets_the_count(workspace: Path) -> None:
    ok = tools(call("shell", "ok", command="true"))
    model = FakeModel([failing_shell(1), failing_shell(2), ok, failing_shell(3), failing_shell(4), answer("fine")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    assert [r.attempts_left for r in h.of("retry")] == [2, 1, 2, 1]


async def test_max_requests_per_turn_interrupts(workspace: Path) -> None:
    ok = [tools(call("todo_read", f"r{i}")) for i in range(5)]
    h = Harness(workspace, FakeModel(list(ok)), replace(ForgeConfig(), max_requests_per_turn=3))
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED
    assert summary.to_dict()["reason"] == {"kind": "MaxRequestPerTurnLimitReached", "limit": 3}
    assert summary.requests == 3


async def test_completes_on_reply_without_tool_call(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    model = FakeModel([tools(call("read", file_path="a.txt"), text="reading"), answer("It says hello.")])
    h = Harness(workspace, model)
    summary = await h.run("what does a.txt say?")
    assert summary.status is TurnStatus.COMPLETED
    assert summary.text == "reading\n\nIt says hello."
    assert model.requests[1][-1]["content"].startswith('<file_content path="a.txt"')
    assert [e.type for e in h.events] == [
        "turnStarted",
        "assistantText",
        "usage",
        "toolCallStarted",
        "toolCallFinished",
        "assistantText",
        "usage",
        "turnFinished",
    ]


async def test_per_tool_limit_from_config(workspace: Path) -> None:
    config = ForgeConfig(shell=replace(ForgeConfig().shell, max_failures=2))
    h = Harness(workspace, FakeModel([failing_shell(1), failing_shell(2)]), config)
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED
    assert summary.to_dict()["reason"]["errors"] == {"shell": 2}
    assert [(r.attempts_left, r.limit) for r in h.of("retry")] == [(1, 2), (0, 2)]


async def test_doom_loop_reminder_after_third_identical_call(workspace: Path) -> None:
    same = [tools(call("todo_read", f"x{i}")) for i in range(3)]
    model = FakeModel([*same, answer("ok")])
    h = Harness(workspace, model)
    await h.run()
    reminders = [m for m in model.requests[3] if m["role"] == "user" and "<system_reminder>" in (m["content"] or "")]
    assert len(reminders) == 1
    assert "same tool call 3 times" in reminders[0]["content"]
    assert not any("<system_reminder>" in (m["content"] or "") for m in model.requests[2])


async def test_request_retry_with_backoff_emits_llm_retry(workspace: Path) -> None:
    config = ForgeConfig(retry=RetryConfig(max_attempts=4, min_delay_ms=100, backoff_factor=2))
    errors = [ModelError("rate limited", True, 429), ModelError("bad gateway", True, 502)]
    model = FakeModel([*errors, answer("hi")])
    h = Harness(workspace, model, config)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    assert [(e.attempt, e.delay_ms) for e in h.of("llmRetry")] == [(1, 100), (2, 200)]
    assert h.sleeps == [0.1, 0.2]
    assert "429" in h.of("llmRetry")[0].cause


async def test_retry_after_is_honoured(workspace: Path) -> None:
    config = ForgeConfig(retry=RetryConfig(max_attempts=2, min_delay_ms=100))
    h = Harness(workspace, FakeModel([ModelError("slow down", True, 429, retry_after_s=3), answer("ok")]), config)
    await h.run()
    assert h.of("llmRetry")[0].delay_ms == 3000


async def test_non_retryable_error_fails_the_turn_at_once(workspace: Path) -> None:
    h = Harness(workspace, FakeModel([ModelError("invalid api key", False, 401), answer("never")]))
    summary = await h.run()
    assert summary.status is TurnStatus.FAILED
    assert "401" in (summary.error or "") and "invalid api key" in (summary.error or "")
    assert h.of("llmRetry") == []


async def test_retries_exhausted_fail_the_turn(workspace: Path) -> None:
    config = ForgeConfig(retry=RetryConfig(max_attempts=3, min_delay_ms=1))
    h = Harness(workspace, FakeModel([ModelError("down", True, 503)] * 3), config)
    summary = await h.run()
    assert summary.status is TurnStatus.FAILED
    assert len(h.of("llmRetry")) == 2


async def test_cancel_ends_turn_as_cancelled_and_keeps_history(workspace: Path) -> None:
    model = FakeModel([tools(call("todo_read", "a")), 30.0, answer("never")])
    h = Harness(workspace, model)
    task = asyncio.ensure_future(h.run("long"))
    while len(model.requests) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    summary = await asyncio.wait_for(task, 2)
    assert summary.status is TurnStatus.CANCELLED
    roles = [m.role for m in h.store.history(summary.conversation_id)]
    assert roles == ["user", "assistant", "tool"]


async def test_unknown_tool_and_bad_arguments_are_failures(workspace: Path) -> None:
    from forge_lsp.domain.messages import ToolCall

    bad_json = ToolCall("b", "read", "{not json")
    model = FakeModel([tools(call("frobnicate", "u"), bad_json, call("read", "m", path="x")), answer("ok")])
    h = Harness(workspace, model)
    await h.run()
    outputs = [e.output for e in h.of("toolCallFinished")]
    assert "unknown tool 'frobnicate'" in outputs[0]
    assert "arguments are not a JSON object" in outputs[1]
    assert "missing required field(s) file_path" in outputs[2]
    # One batch: read failed twice and counts once.
    assert {(r.tool, r.attempts_left) for r in h.of("retry")} == {("frobnicate", 2), ("read", 2)}


async def test_followup_ends_the_turn(workspace: Path) -> None:
    model = FakeModel([tools(call("followup", "f", question="Which port?")), answer("never")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    assert len(model.requests) == 1


async def test_new_turn_resumes_history_with_fresh_tracker(workspace: Path) -> None:
    model = FakeModel([failing_shell(1), failing_shell(2), failing_shell(3), failing_shell(4), answer("ok")])
    h = Harness(workspace, model)
    first = await h.run("first")
    assert first.status is TurnStatus.INTERRUPTED
    second = await h.run("continue")
    assert second.status is TurnStatus.COMPLETED
    assert h.of("retry")[-1].attempts_left == 2  # fresh tracker
    assert [m["content"] for m in model.requests[-1] if m["role"] == "user"] == ["first", "continue"]


async def test_pending_todos_reminder_keeps_the_turn_going(workspace: Path) -> None:
    todo = tools(call("todo_write", "t", todos=[{"content": "write tests", "status": "pending"}]))
    model = FakeModel([todo, answer("done?"), answer("really done")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    assert len(model.requests) == 3
    assert "[pending] write tests" in model.requests[2][-1]["content"]


async def test_huge_tool_output_reaches_the_model_whole_and_events_clipped(workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"{i:04d}" + "y" * 96 + "\n" for i in range(600)))
    model = FakeModel([tools(call("read", "r", file_path="big.txt")), answer("ok")])
    h = Harness(workspace, model)
    await h.run()
    (finished,) = h.of("toolCallFinished")
    payload = finished.to_dict()["output"]
    assert len(payload) < 21_000 and payload.endswith("more characters]")
    sent = model.requests[1][-1]["content"]
    assert len(sent) > 60_000 and "600:0599" in sent
