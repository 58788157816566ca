"""Models as users run them (issue 38): loopback servers that behave as llama.cpp's llama-server, llama-cpp-python's
server, Ollama and Anthropic do, through litellm's real HTTP path. tests/llama_server checks the same against the
real llama-server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.events import Event
from forge_lsp.llm import local_servers
from forge_lsp.llm.litellm_adapter import cost_of, load_litellm
from forge_lsp.render import format_event

from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server wants none
    local_servers.forget()
    yield
    local_servers.forget()


async def run_turn(
    ws: Path,
    stub: OpenAIStub,
    extra: str = "",
    *,
    model: str = "openai/local",
    api_base: str | None = None,
    timeout_s: int = 30,
    retry: str = "max_attempts = 3\nmin_delay_ms = 5\n",
    prompt: str = "do it",
) -> tuple[Any, list[Event]]:
    base = api_base or stub.url
    (ws / ".forge.toml").write_text(
        f'model = "{model}"\napi_base = "{base}"\nrequest_timeout_secs = {timeout_s}\n{extra}\n[retry]\n{retry}'
    )

    async def sleep(s: float) -> None:
        pass

    runtime = WorkspaceRuntime(ws, sleep=sleep, trusted=True)  # the user trusts the loopback api_base
    events: list[Event] = []
    try:
        summary = await runtime.run(prompt, events.append)
    finally:
        runtime.close()
    return summary, events


def of(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


def notices(events: list[Event], code: str) -> list[Any]:
    return [e for e in of(events, "modelNotice") if e.code == code]


READ_A = {"tool": "read", "arguments": json.dumps({"file_path": "a.txt"})}


# -- 1. tool_choice, and a server that cannot stream with tools ---------------------------------------------------


async def test_tool_choice_auto_goes_with_every_request_that_offers_tools(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIStub([READ_A, {"text": "It says alpha."}]) as stub:
        summary, _ = await run_turn(workspace, stub)
    assert summary.status.value == "completed" and summary.tool_calls == 1
    assert all(r["body"]["tool_choice"] == "auto" and r["body"]["tools"] for r in stub.requests)


async def test_a_server_that_cannot_stream_with_tools_gets_unstreamed_requests(
    workspace: Path,
    record_reliability,  # type: ignore[no-untyped-def]
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIStub([READ_A, {"text": "It says alpha."}, {"text": "again"}], server="llama-cpp-python") as stub:
        summary, events = await run_turn(workspace, stub)
        streamed = [r["body"].get("stream", False) for r in stub.requests]
        second, second_events = await run_turn(workspace, stub, prompt="and again")
    # Refused once (500), then the same request unstreamed at once: no llmRetry, no backoff, no eight attempts.
    assert streamed == [True, False, False], streamed
    assert summary.status.value == "completed" and summary.tool_calls == 1 and summary.text == "It says alpha."
    assert of(events, "llmRetry") == []
    (notice,) = notices(events, "noStreaming")
    assert notice.level == "info" and "Automatic streaming tool choice is not supported" in notice.message
    assert "It says alpha." in "".join(e.text for e in of(events, "assistantText"))
    # Remembered for the session, said once.
    assert second.status.value == "completed" and second.text == "again"
    assert stub.requests[-1]["body"].get("stream", False) is False and len(stub.requests) == 4
    assert notices(second_events, "noStreaming") == []
    record_reliability(
        "a model server that cannot stream with tools (llama-cpp-python: 500 'Automatic streaming tool choice is not supported')",
        "llama-cpp-python-like loopback server",
        "the same request goes unstreamed at once (no retries), and so do the model's next ones; said once in the log",
    )


# -- 2. tools the server drops --------------------------------------------------------------------------------


async def test_a_server_that_drops_the_tools_is_warned_about_once_per_model(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIStub([READ_A, READ_A], server="llama-server", template_tools=False) as stub:
        summary, events = await run_turn(workspace, stub)
        _, again = await run_turn(workspace, stub, prompt="again")
    assert summary.status.value == "completed" and summary.tool_calls == 0  # the model answered in prose
    (notice,) = notices(events, "toolsDropped")
    reported = of(events, "usage")[0].request.prompt_tokens
    assert f"reported {reported:,} prompt tokens" in notice.message and "tools alone are ~" in notice.message
    assert "--jinja" in notice.message and "chat template with tools" in notice.message
    assert notice.level == "warning" and "⚠" in (format_event(notice.to_dict()) or "")
    assert notices(again, "toolsDropped") == []


async def test_a_server_that_passes_the_tools_on_is_not_warned_about(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    with OpenAIStub([READ_A, {"text": "It says alpha."}], server="llama-server") as stub:
        summary, events = await run_turn(workspace, stub)
    assert summary.tool_calls == 1 and notices(events, "toolsDropped") == []


# -- 3. a reply cut at the token limit -------------------------------------------------------------------------


async def test_a_reply_cut_at_max_tokens_says_so(workspace: Path) -> None:
    long = " ".join(f"word{i}" for i in range(40))
    with OpenAIStub([{"text": long}], server="llama-server") as stub:
        summary, events = await run_turn(workspace, stub, "max_tokens = 8")
    assert stub.requests[0]["body"]["max_tokens"] == 8
    assert summary.status.value == "completed" and summary.replies_cut == 1
    assert summary.to_dict()["repliesCut"] == 1
    (notice,) = notices(events, "replyCut")
    assert "cut at the token limit (max_tokens = 8)" in notice.message
    end = format_event(of(events, "turnFinished")[0].to_dict()) or ""
    assert "1 reply cut at the token limit" in end, end


async def test_a_tool_call_cut_at_max_tokens_fails_naming_the_cut(workspace: Path) -> None:
    cut = {"tool": "write", "arguments": '{"file_path": "big.py", "content": "print(1)\\nprint(', "finish": "length"}
    with OpenAIStub([cut, {"text": "ok"}], server="llama-server") as stub:
        summary, events = await run_turn(workspace, stub, "max_tokens = 64")
    (finished,) = of(events, "toolCallFinished")
    assert not finished.ok
    assert "cut at the token limit (max_tokens = 64) before this write call's arguments were complete" in finished.output
    assert "arguments are not a JSON object" not in finished.output
    assert not (workspace / "big.py").exists()
    assert summary.replies_cut == 1 and summary.failures == 1
    (notice,) = notices(events, "replyCut")
    assert "tool call was cut" in notice.message
    # The model reads why in its next request.
    assert "cut at the token limit" in stub.requests[1]["body"]["messages"][-1]["content"]


async def test_without_max_tokens_the_cut_names_the_servers_limit(workspace: Path) -> None:
    with OpenAIStub([{"text": "half an answer", "finish": "length"}], server="llama-server") as stub:
        _, events = await run_turn(workspace, stub)
    (notice,) = notices(events, "replyCut")
    assert "the model server's own output limit (llama-server -n, Ollama num_predict; max_tokens sets one)" in notice.message


# -- 4. the retry budget and identical failures ---------------------------------------------------------------


async def test_timeouts_stop_at_the_requests_total_budget(workspace: Path, record_reliability) -> None:  # type: ignore[no-untyped-def]
    with OpenAIStub([{"hang": 5}] * 8) as stub:
        load_litellm()  # not the turn's time: the first litellm test of a loaded worker imports it for ~10 s
        started = time.perf_counter()
        summary, events = await run_turn(workspace, stub, timeout_s=1, retry="max_attempts = 8\nmin_delay_ms = 5\n")
        took = time.perf_counter() - started
    # The default budget is 2 x request_timeout_secs: a second attempt at most (cut where the budget ends), never
    # the eight the retry settings allow. How far the first got into the budget depends on the machine's load.
    error = summary.error or ""
    assert summary.status.value == "failed" and len(stub.requests) in (1, 2), (error, len(stub.requests))
    assert error.startswith("model request failed: model request timed out after 1 s"), error
    assert "[retry] max_total_secs = 2" in error and took < 8, (error, took)
    assert len(of(events, "llmRetry")) == len(stub.requests) - 1
    with OpenAIStub([{"hang": 5}] * 8) as stub:
        summary, _ = await run_turn(
            workspace, stub, timeout_s=1, retry="max_attempts = 8\nmin_delay_ms = 5\nmax_total_secs = 3\n"
        )
    assert 2 <= len(stub.requests) <= 3 and "[retry] max_total_secs = 3" in (summary.error or ""), summary.error
    record_reliability(
        "a model request that times out on every attempt",
        "request_timeout_secs = 1, [retry] max_attempts = 8, no max_total_secs",
        "at most 2 attempts, ~2 s (the budget: 2 x request_timeout_secs), then the turn fails naming [retry] max_total_secs",
    )


async def test_the_same_failure_is_not_retried_to_the_end(workspace: Path) -> None:
    jinja = {"status": 500, "body": {"error": {"message": "tools param requires --jinja flag", "type": "server_error"}}}
    with OpenAIStub([jinja] * 8) as stub:
        summary, events = await run_turn(workspace, stub, retry="max_attempts = 8\nmin_delay_ms = 5\n")
    assert len(stub.requests) == 3 and len(of(events, "llmRetry")) == 2
    assert "--jinja" in (summary.error or "") and "the same failure 3 times in a row" in (summary.error or "")
    # Overloaded: the same answer is expected until it passes, so it is retried to the end.
    with OpenAIStub([{"status": 503}] * 4 + [{"text": "back"}]) as stub:
        summary, _ = await run_turn(workspace, stub, retry="max_attempts = 5\nmin_delay_ms = 5\n")
    assert summary.status.value == "completed" and len(stub.requests) == 5


# -- 5. a stable prefix and prompt caching --------------------------------------------------------------------


async def test_a_second_workspace_reuses_the_prompt_prefix_on_llama_server(tmp_path: Path) -> None:
    first, second = tmp_path / "alpha-project", tmp_path / "beta-service"
    first.mkdir()
    second.mkdir()
    with OpenAIStub([{"text": "one"}, {"text": "two"}], server="llama-server") as stub:
        await run_turn(first, stub, prompt="what is here?")
        _, events = await run_turn(second, stub, prompt="what is here?")
    (usage,) = of(events, "usage")
    evaluated = usage.request.prompt_tokens - usage.request.cached_tokens
    assert evaluated <= 0.25 * usage.request.prompt_tokens, (usage.request, evaluated)
    system, first_message = stub.requests[1]["body"]["messages"][:2]
    assert system["role"] == "system" and "beta-service" not in system["content"] and "alpha-project" not in system["content"]
    assert first_message["role"] == "user" and first_message["content"].startswith("<system_information>")
    assert f"<current_working_directory>{second.resolve()}</current_working_directory>" in first_message["content"]
    assert first_message["content"].endswith("\n\nwhat is here?")


async def test_a_conversation_sends_the_workspace_context_once_at_its_start(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Answer in French.")
    with OpenAIStub([{"text": "un"}, {"text": "deux"}]) as stub:
        await run_turn(workspace, stub, prompt="first")
        await run_turn(workspace, stub, prompt="second")
    messages = stub.requests[1]["body"]["messages"]
    user = [m["content"] for m in messages if m["role"] == "user"]
    assert (
        user[0].startswith("<system_information>") and "<project_guidelines>\nAnswer in French.\n</project_guidelines>" in user[0]
    )
    assert user[0].endswith("\n\nfirst") and user[1] == "second"
    assert "Answer in French." not in messages[0]["content"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]


async def test_anthropic_requests_mark_cache_breakpoints_and_cached_tokens_are_priced(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    (workspace / "a.txt").write_text("alpha\n")
    model = "anthropic/claude-sonnet-4-5"
    with OpenAIStub([READ_A, {"text": "It says alpha."}]) as stub:
        summary, events = await run_turn(workspace, stub, model=model, api_base=stub.url.removesuffix("/v1"))
    assert summary.status.value == "completed" and summary.tool_calls == 1
    for request in stub.requests:
        body = request["body"]
        assert request["path"] == "/v1/messages"
        assert "cache_control" in body["system"][-1]  # the stable prefix: the tools, then the system prompt
        last = body["messages"][-1]["content"]
        assert "cache_control" in last[-1]  # the conversation so far
    first, second = (e.request for e in of(events, "usage"))
    assert first.cache_write_tokens > 0 and first.cached_tokens == 0
    assert second.cached_tokens >= first.cache_write_tokens  # the whole first request read back from the cache
    assert summary.usage.cached_tokens == second.cached_tokens
    uncached = cost_of(model, type(second)(second.prompt_tokens, second.completion_tokens))
    assert second.cost is not None and uncached is not None and second.cost < uncached
    line = format_event(of(events, "turnFinished")[0].to_dict()) or ""
    assert f"({second.cached_tokens} cached, " in line, line


async def test_a_local_server_gets_no_cache_breakpoints(workspace: Path) -> None:
    with OpenAIStub([{"text": "hi"}], server="llama-server") as stub:
        await run_turn(workspace, stub)
    assert "cache_control" not in json.dumps(stub.requests[0]["body"])


# -- 6. the context window -----------------------------------------------------------------------------------


async def test_the_context_window_is_learnt_from_llama_server(workspace: Path) -> None:
    big = {"text": "ok", "usage": {"prompt_tokens": 3500, "completion_tokens": 2}}
    with OpenAIStub([big], server="llama-server", n_ctx=4096) as stub:
        _, events = await run_turn(workspace, stub)
    assert "/props" in stub.gets
    (warning,) = of(events, "contextWarning")
    assert warning.context_window == 4096 and warning.prompt_tokens == 3500
    # The system prompt and the tools alone take over a quarter of 4096.
    (fixed,) = notices(events, "contextFixed")
    assert "of the 4,096-token context window of openai/local" in fixed.message and "llama-server -c" in fixed.message


async def test_a_roomy_window_gives_no_warning_and_is_asked_once(workspace: Path) -> None:
    with OpenAIStub([{"text": "one"}, {"text": "two"}], server="llama-server", n_ctx=32768) as stub:
        _, events = await run_turn(workspace, stub)
        await run_turn(workspace, stub, prompt="again")
    assert notices(events, "contextFixed") == [] and of(events, "contextWarning") == []
    assert stub.gets.count("/props") == 1


async def test_the_context_window_is_learnt_from_ollama(workspace: Path) -> None:
    big = {"text": "ok", "usage": {"prompt_tokens": 7000, "completion_tokens": 2}}
    with OpenAIStub([big], server="ollama", n_ctx=8192) as stub:
        _, events = await run_turn(workspace, stub, model="openai/smollm2:135m")
    assert stub.gets == ["/props", "/api/show"] or stub.gets == ["/api/show"], stub.gets
    (warning,) = of(events, "contextWarning")
    assert warning.context_window == 8192


async def test_the_context_window_key_wins_and_nothing_is_asked(workspace: Path) -> None:
    big = {"text": "ok", "usage": {"prompt_tokens": 1700, "completion_tokens": 2}}
    with OpenAIStub([big], server="llama-server", n_ctx=32768) as stub:
        _, events = await run_turn(workspace, stub, "context_window = 2000")
    assert stub.gets == []
    (warning,) = of(events, "contextWarning")
    assert warning.context_window == 2000


async def test_a_server_that_is_down_costs_the_turn_no_time(workspace: Path) -> None:
    with OpenAIStub([{"text": "ok"}], server="llama-server") as stub:
        # /props hangs past the ask's limit: the turn goes on and the request is made.
        slow = stub.get

        def hanging(path: str) -> Any:
            time.sleep(3)
            return slow(path)

        stub.get = hanging  # type: ignore[method-assign]
        load_litellm()  # not the turn's time: the first litellm test of a loaded worker imports it for ~10 s
        started = time.perf_counter()
        summary, _ = await asyncio.wait_for(run_turn(workspace, stub), 30)
    assert summary.status.value == "completed" and time.perf_counter() - started < 15
