"""litellm's real HTTP path against a loopback OpenAI-compatible server: streaming, faults, retries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.domain.events import Event
from forge_lsp.runtime import WorkspaceRuntime

from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")


async def run_turn(ws: Path, stub: OpenAIStub, extra: str = "") -> tuple[Any, list[Event], list[float]]:
    (ws / ".forge.toml").write_text(
        f'model = "openai/gpt-stub"\napi_base = "{stub.url}"\nrequest_timeout_secs = 2\n'
        f"[retry]\nmax_attempts = 3\nmin_delay_ms = 5\n{extra}"
    )
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    runtime = WorkspaceRuntime(ws, sleep=sleep)
    events: list[Event] = []
    try:
        summary = await runtime.run("do it", events.append)
    finally:
        runtime.close()
    return summary, events, sleeps


def of(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


async def test_streamed_tool_call_deltas_and_usage(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIStub([{"tool": "read", "arguments": json.dumps({"file_path": "a.txt"})}, {"text": "It says alpha."}]) as stub:
        summary, events, _ = await run_turn(workspace, stub)
    assert summary.status.value == "completed", summary
    assert summary.text == "It says alpha."
    (finished,) = of(events, "toolCallFinished")
    assert finished.ok and "1:alpha" in finished.output
    first, second = stub.requests
    assert first["body"]["stream"] is True and first["auth"] == "Bearer sk-test-0123456789"
    assert {t["function"]["name"] for t in first["body"]["tools"]} >= {"read", "shell", "patch"}
    tool_msg = second["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_stub1" and "alpha" in tool_msg["content"]


@pytest.mark.parametrize(
    ("fault", "retryable"),
    [
        ({"status": 429, "headers": {"Retry-After": "2"}}, True),
        ({"status": 500}, True),
        ({"status": 503}, True),
        ({"reset": True}, True),
        ({"hang": 4}, True),
        ({"empty": True}, True),
        ({"status": 401}, False),
        ({"status": 403}, False),
    ],
    ids=["429-retry-after", "500", "503", "connection-reset", "timeout", "empty-reply", "401", "403"],
)
async def test_faults_are_retried_or_fail_clearly(
    workspace: Path, fault: dict[str, Any], retryable: bool, record_reliability
) -> None:  # type: ignore[no-untyped-def]
    with OpenAIStub([fault, {"text": "recovered"}]) as stub:
        summary, events, sleeps = await run_turn(workspace, stub)
    retries = of(events, "llmRetry")
    outcome = f"turn {summary.status.value}, {len(retries)} llmRetry, {len(stub.requests)} HTTP requests"
    record_reliability(
        f"model HTTP fault: {json.dumps(fault)}", "litellm openai/ path, loopback stub, [retry] max_attempts=3", outcome
    )
    if retryable:
        assert summary.status.value == "completed", summary
        assert summary.text == "recovered"
        assert len(retries) == 1 and len(stub.requests) == 2
        if fault.get("status") == 429:
            assert retries[0].delay_ms == 2000 and sleeps == [2.0]
            assert "429" in retries[0].cause
    else:
        assert summary.status.value == "failed"
        assert retries == [] and len(stub.requests) == 1
        assert str(fault["status"]) in (summary.error or "")


async def test_retries_exhausted_fail_the_turn(workspace: Path, record_reliability) -> None:  # type: ignore[no-untyped-def]
    with OpenAIStub([{"status": 503}] * 3) as stub:
        summary, events, sleeps = await run_turn(workspace, stub)
    record_reliability(
        "model HTTP 503 on every attempt",
        "3 attempts (max_attempts=3)",
        f"turn {summary.status.value} with a clear error; server fine",
    )
    assert summary.status.value == "failed"
    assert "503" in (summary.error or "") and "model request failed" in (summary.error or "")
    assert len(of(events, "llmRetry")) == 2 and len(stub.requests) == 3
    assert sleeps == [0.005, 0.01]


async def test_malformed_tool_arguments_are_a_tool_failure_the_model_sees(workspace: Path) -> None:
    with OpenAIStub([{"tool": "shell", "arguments": '{"command": "ls'}, {"text": "fixed"}]) as stub:
        summary, events, _ = await run_turn(workspace, stub)
    assert summary.status.value == "completed"
    (retry,) = of(events, "retry")
    assert retry.tool == "shell" and retry.attempts_left == 2
    tool_msg = stub.requests[1]["body"]["messages"][-1]
    assert "arguments are not a JSON object" in tool_msg["content"] and "<retry>" in tool_msg["content"]
