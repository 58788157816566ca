"""litellm's real HTTP path against a loopback OpenAI-compatible server: streaming, faults, retries."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.events import Event
from forge_lsp.llm.litellm_adapter import load_litellm

from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")


async def run_turn(
    ws: Path,
    stub: OpenAIStub | str,
    extra: str = "",
    *,
    model: str = "openai/gpt-stub",
    timeout_s: int = 2,
    retry: str = "max_attempts = 3\nmin_delay_ms = 5\n",
    real_sleep: bool = False,
) -> tuple[Any, list[Event], list[float]]:
    url = stub if isinstance(stub, str) else stub.url
    api_base = f'api_base = "{url}"\n' if url else ""  # "": the provider's own address
    (ws / ".forge.toml").write_text(f'model = "{model}"\n{api_base}request_timeout_secs = {timeout_s}\n[retry]\n{retry}{extra}')
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)
        if real_sleep:
            await asyncio.sleep(s)

    runtime = WorkspaceRuntime(ws, sleep=sleep, trusted=True)  # the user trusts the loopback api_base
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


@pytest.fixture
def litellm_loaded() -> None:
    """Import litellm before the clock starts: the tests time the failure, not the import."""
    load_litellm()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CONTEXT_EXCEEDED = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
MODEL_MISSING = {
    "error": {"message": "The model `gpt-stub` does not exist", "type": "invalid_request_error", "code": "model_not_found"}
}


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ({"status": 401}, ["HTTP 401", "API key was refused", "OPENAI_API_KEY"]),
        ({"status": 403}, ["HTTP 403", "permission denied"]),
        ({"status": 400}, ["HTTP 400", "rejected the request"]),
        ({"status": 404, "body": MODEL_MISSING}, ["model not found", "check the model setting", "api_base", "does not exist"]),
        ({"status": 400, "body": {"error": {"message": "model 'llama9' not found, try pulling it first"}}}, ["model not found"]),
        ({"status": 400, "body": CONTEXT_EXCEEDED}, ["context window", "new conversation", "maximum context length"]),
    ],
    ids=["401", "403", "400", "404-model", "400-model-not-found", "context-window-exceeded"],
)
async def test_errors_a_retry_cannot_fix_fail_at_once(
    workspace: Path, fault: dict[str, Any], words: list[str], litellm_loaded: None, record_reliability
) -> None:  # type: ignore[no-untyped-def]
    # The default retry policy (8 attempts from 1 s) with real sleeps: a retry would take seconds.
    with OpenAIStub([fault] * 8) as stub:
        started = time.monotonic()
        summary, events, _ = await run_turn(workspace, stub, retry="", real_sleep=True)
        elapsed = time.monotonic() - started
    assert summary.status.value == "failed", summary
    assert of(events, "llmRetry") == [] and len(stub.requests) == 1
    assert elapsed < 5, elapsed  # no backoff slept (its 8 attempts from 1 s take 2 min); 2 s failed on a loaded CI
    error = summary.error or ""
    assert error.startswith("model request failed: ")
    for word in words:
        assert word in error, (word, error)
    assert "litellm." not in error and "OpenAIException" not in error  # litellm's class-name noise is gone
    record_reliability(f"model error a retry cannot fix: {json.dumps(fault)[:80]}", "default [retry]", "turn failed at once")


@pytest.mark.parametrize(
    ("model", "variable", "unset"),
    [
        ("openai/gpt-4o", "OPENAI_API_KEY", ["OPENAI_API_KEY"]),
        ("anthropic/claude-3-5-sonnet-20240620", "ANTHROPIC_API_KEY", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]),
    ],
    ids=["openai", "anthropic"],
)
async def test_missing_api_key_fails_at_once_naming_the_variable(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, model: str, variable: str, unset: list[str], litellm_loaded: None
) -> None:
    for name in unset:
        monkeypatch.delenv(name, raising=False)
    started = time.monotonic()
    summary, events, _ = await run_turn(workspace, "", model=model, retry="", real_sleep=True)  # the provider's own URL
    elapsed = time.monotonic() - started
    assert summary.status.value == "failed", summary
    assert summary.error == (
        f"model request failed: {variable} is not set: export it in the environment that starts forge-lsp (model {model})"
    )
    assert of(events, "llmRetry") == [] and summary.requests == 0  # it never left: not counted
    assert elapsed < 5, elapsed  # retries would take longer: their first backoffs alone add up to more


async def test_a_local_server_at_api_base_needs_no_api_key(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, litellm_loaded: None
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub([{"text": "hello from the local server"}]) as stub:
        summary, _, _ = await run_turn(workspace, stub, model="openai/llama")
    assert summary.status.value == "completed", summary.error
    assert summary.text == "hello from the local server" and summary.requests == 1


async def test_a_server_at_api_base_that_wants_a_key_says_which_variable_is_unset(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, litellm_loaded: None
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub([{"status": 401, "body": {"error": {"message": "missing bearer token"}}}]) as stub:
        summary, _, _ = await run_turn(workspace, stub, model="openai/llama")
    assert summary.status.value == "failed" and summary.requests == 1
    error = summary.error or ""
    assert "asked for an API key" in error and "OPENAI_API_KEY is not set" in error, error


async def test_unreachable_server_two_quick_retries_then_cannot_connect(
    workspace: Path, litellm_loaded: None, record_reliability
) -> None:  # type: ignore[no-untyped-def]
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    summary, events, sleeps = await run_turn(workspace, url + "/v1", retry="", real_sleep=True)
    elapsed = time.monotonic() - started
    retries = of(events, "llmRetry")
    assert summary.status.value == "failed", summary
    assert len(retries) == 2, retries
    assert all(f"cannot connect to {url}" in r.cause for r in retries)
    assert summary.error == (
        f"model request failed: cannot connect to {url} (api_base = {url}/v1): is the model server running there?"
    )
    assert "HTTP" not in summary.error
    assert all(s <= 0.5 for s in sleeps) and elapsed < 3, (sleeps, elapsed)
    record_reliability("model server not running (connection refused)", "default [retry]", "2 quick retries, then cannot connect")


async def test_slow_reply_is_called_a_timeout(workspace: Path, litellm_loaded: None) -> None:
    with OpenAIStub([{"hang": 3}, {"hang": 3}]) as stub:
        summary, events, _ = await run_turn(workspace, stub, timeout_s=1, retry="max_attempts = 2\nmin_delay_ms = 5\n")
    (retry,) = of(events, "llmRetry")
    assert retry.cause.startswith("model request timed out after 1 s") and "408" not in retry.cause
    assert summary.status.value == "failed"
    assert (summary.error or "").startswith("model request failed: model request timed out after 1 s")
    assert "408" not in (summary.error or "")


async def test_rate_limit_is_retried_with_the_delay_capped(workspace: Path) -> None:
    faults = [{"status": 429}, {"status": 429}, {"status": 429, "headers": {"Retry-After": "30"}}]
    faults += [{"status": 429, "headers": {"Retry-After": "3600"}}]
    with OpenAIStub([*faults, {"text": "recovered"}]) as stub:
        summary, events, sleeps = await run_turn(workspace, stub, retry="max_attempts = 6\nmin_delay_ms = 8000\n")
    assert summary.status.value == "completed" and summary.text == "recovered"
    # 8 s, then 16 s capped at 10 s; Retry-After 30 s honoured; Retry-After 3600 s bounded by max_delay_secs (60).
    assert [r.delay_ms for r in of(events, "llmRetry")] == [8000, 10000, 30000, 60000]
    assert sleeps == [8.0, 10.0, 30.0, 60.0]
    assert all(r.cause.startswith("HTTP 429: rate limited") for r in of(events, "llmRetry"))


async def test_streamed_reasoning_is_stored_bounded_and_sent_back(workspace: Path) -> None:
    from forge_lsp.domain.messages import MAX_REPLY_CHARS
    from forge_lsp.state.store import StateStore

    (workspace / "a.txt").write_text("alpha\n")
    # Past the bound in 1,000-character words (the stub streams a word per chunk: 40,000 chunks of "think" took 90 s).
    long_thought = " ".join(["think" * 200] * (MAX_REPLY_CHARS // 1000 + 5))
    behaviours = [
        {"reasoning": "I should read a.txt first.", "tool": "read", "arguments": json.dumps({"file_path": "a.txt"})},
        {"reasoning": long_thought, "text": "It says alpha."},
    ]
    with OpenAIStub(behaviours) as stub:
        summary, _, _ = await run_turn(workspace, stub)
    assert summary.status.value == "completed", summary
    # The next request carries the tool-call message's reasoning back, as reasoning_content.
    sent = [m for m in stub.requests[1]["body"]["messages"] if m["role"] == "assistant"]
    assert sent[-1]["reasoning_content"].strip() == "I should read a.txt first."
    store = StateStore(workspace)
    try:
        history = store.history(store.current_conversation())
    finally:
        store.close()
    thoughts = [m.reasoning for m in history if m.role == "assistant"]
    assert thoughts[0] is not None and thoughts[0].strip() == "I should read a.txt first."
    assert thoughts[-1] is not None and len(thoughts[-1]) == MAX_REPLY_CHARS and thoughts[-1].startswith("thinkthink")


async def test_compaction_keeps_the_last_reasoning_it_summarizes(workspace: Path) -> None:
    from forge_lsp.state.store import StateStore

    (workspace / "big.txt").write_text("a line of the file\n" * 200)

    def read(line: int) -> dict[str, Any]:  # each from another line: six identical reads are a loop the turn stops
        return {"tool": "read", "arguments": json.dumps({"file_path": "big.txt", "start_line": line})}

    # Six reads that think aloud, six that do not, then the answer.
    behaviours = [{**read(i + 1), "reasoning": f"thought {i}"} for i in range(6)] + [read(i + 7) for i in range(6)]
    behaviours.append({"text": "finished"})
    with OpenAIStub(behaviours) as stub:
        summary, events, _ = await run_turn(
            workspace, stub, "[compact]\nmessage_threshold = 12\nretention_window = 4\ntoken_threshold = 0\n"
        )
    assert summary.status.value == "completed", summary
    assert of(events, "compacted"), "no compaction happened"
    last = stub.requests[-1]["body"]["messages"]
    sent_thoughts = [m.get("reasoning_content") for m in last if m["role"] == "assistant" and m.get("reasoning_content")]
    # Every thinking read was summarized; its last reasoning rides on the first assistant message kept.
    assert [t.strip() for t in sent_thoughts] == ["thought 5"], sent_thoughts
    assert not any("thought 4" in json.dumps(m) for m in last)
    store = StateStore(workspace)
    try:
        history = store.history(store.current_conversation())
    finally:
        store.close()
    assert [m.reasoning.strip() for m in history if m.reasoning] == [f"thought {i}" for i in range(6)]
