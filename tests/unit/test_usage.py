"""Tokens and cost: per request and per turn, from the stream's usage and litellm's local cost map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.events import ContextWarning, UsageReport
from forge_lsp.domain.messages import AssistantReply, Usage
from forge_lsp.llm.litellm_adapter import cost_of, load_litellm

from fakes import FakeModel, Harness
from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(90)


def reply(text: str, prompt: int, completion: int, cached: int = 0, cost: float | None = 0.01) -> AssistantReply:
    return AssistantReply(text, (), "stop", Usage(prompt, completion, cached, cost, 1))


def test_usage_sums_and_an_unknown_cost_stays_unknown() -> None:
    a = Usage(100, 10, 40, 0.5, 1)
    b = Usage(200, 20, 0, 0.25, 1)
    assert (a + b).to_dict() == {"promptTokens": 300, "completionTokens": 30, "cachedTokens": 40, "cost": 0.75}
    assert (a + b).requests == 2
    assert (a + Usage(1, 1, 0, None, 1)).to_dict()["cost"] == "unknown"
    assert Usage.from_dict((a + b).to_dict()) == Usage(300, 30, 40, 0.75)
    assert Usage.from_dict({"promptTokens": "x", "cost": "unknown"}) == Usage(0, 0, 0, None)


def test_cost_comes_from_the_local_cost_map_or_is_unknown() -> None:
    load_litellm()
    import litellm

    prompt, completion = litellm.cost_per_token(model="gpt-4o", prompt_tokens=1000, completion_tokens=100)
    assert cost_of("openai/gpt-4o", Usage(1000, 100)) == pytest.approx(prompt + completion)
    # Cached prompt tokens are cheaper: the cost map prices them apart.
    assert cost_of("openai/gpt-4o", Usage(1000, 100, 500)) < prompt + completion  # type: ignore[operator]
    assert cost_of("openai/no-such-model-xyz", Usage(1000, 100)) is None
    assert cost_of("scripted/echo", Usage(1000, 100)) is None


async def test_a_turn_sums_its_requests_and_reports_each(workspace: Path) -> None:
    from fakes import call

    first = AssistantReply("", (call("todo_read", "r1"),), "tool_calls", Usage(100, 5, 20, 0.001, 1))
    model = FakeModel([first, reply("done", 150, 7, 0, 0.002)])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.usage.to_dict() == {"promptTokens": 250, "completionTokens": 12, "cachedTokens": 20, "cost": 0.003}
    assert summary.to_dict()["usage"] == summary.usage.to_dict()
    reports = [e for e in h.events if isinstance(e, UsageReport)]
    assert [r.request.prompt_tokens for r in reports] == [100, 150]
    assert reports[-1].turn == summary.usage
    finished = h.events[-1].to_dict()
    assert finished["type"] == "turnFinished" and finished["usage"]["promptTokens"] == 250


class WindowModel(FakeModel):
    def context_window(self) -> int:
        return 1000


async def test_context_warning_once_when_a_prompt_passes_80_percent(workspace: Path) -> None:
    from fakes import call, tools

    big = AssistantReply("", (call("todo_read", "r1"),), "tool_calls", Usage(850, 5, 0, None, 1))
    model = WindowModel([reply("", 700, 1), big, reply("done", 900, 1)])
    model.replies[0] = tools(call("todo_read", "r0"))
    h = Harness(workspace, model)
    await h.run()
    warnings = [e for e in h.events if isinstance(e, ContextWarning)]
    assert len(warnings) == 1
    (w,) = warnings
    assert w.to_dict()["promptTokens"] == 850 and w.to_dict()["contextWindow"] == 1000 and w.percent == 85
    assert "85%" in w.message() and "forge.compact" in w.message()


async def test_no_warning_under_80_percent(workspace: Path) -> None:
    h = Harness(workspace, WindowModel([reply("fine", 800, 1)]))
    await h.run()
    assert not [e for e in h.events if isinstance(e, ContextWarning)]


async def test_streamed_usage_is_requested_and_priced_over_http(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    behaviours = [{"text": "hello", "usage": {"prompt_tokens": 120000, "completion_tokens": 50, "cached_tokens": 100000}}]
    with OpenAIStub(behaviours) as stub:
        (workspace / ".forge.toml").write_text(f'model = "openai/gpt-4o"\napi_base = "{stub.url}"\n')
        runtime = WorkspaceRuntime(workspace, trusted=True)
        events: list = []
        try:
            summary = await runtime.run("hi", events.append)
            status = runtime.status()
        finally:
            runtime.close()
    assert stub.requests[0]["body"]["stream_options"] == {"include_usage": True}
    usage = summary.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (120000, 50, 100000)
    assert usage.cost == pytest.approx(cost_of("openai/gpt-4o", Usage(120000, 50, 100000)))
    assert usage.cost and usage.cost > 0
    # gpt-4o's window is 128000 tokens in litellm's model info: 120000 is past 80 %.
    (warning,) = [e for e in events if e.type == "contextWarning"]
    assert warning.context_window == 128000
    assert status["usage"]["lastTurn"] == usage.to_dict()
    assert status["usage"]["conversation"] == usage.to_dict()


async def test_scripted_model_reports_estimated_usage_and_unknown_cost(workspace: Path) -> None:
    (workspace / "s.json").write_text(
        json.dumps({"responses": [{"text": "one"}, {"text": "two", "usage": {"prompt_tokens": 77, "cached_tokens": 7}}]})
    )
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        first = await runtime.run("x" * 400, lambda e: None)
        second = await runtime.run("again", lambda e: None)
        status = runtime.status()
    finally:
        runtime.close()
    assert first.usage.prompt_tokens > 100  # the system prompt and the 400-character prompt, at ~4 characters a token
    assert first.usage.to_dict()["cost"] == "unknown"
    assert (second.usage.prompt_tokens, second.usage.cached_tokens) == (77, 7)
    total = status["usage"]["conversation"]
    assert total["promptTokens"] == first.usage.prompt_tokens + 77 and total["cost"] == "unknown"
    transcript = (workspace / ".forge" / "transcripts" / f"{second.turn_id}.md").read_text()
    assert "usage: 77 prompt (7 cached) + " in transcript and "cost unknown" in transcript


async def test_a_turn_that_got_no_reply_has_an_unknown_cost_and_adds_none_to_its_conversation(workspace: Path) -> None:
    from forge_lsp.domain.retry import SERVER, ModelError

    h = Harness(workspace, FakeModel([reply("one", 10, 2, 0, 0.5)]))
    answered = await h.run()
    h.model.replies.append(ModelError("boom", False, 500, kind=SERVER))
    failed = await h.run()
    assert failed.requests == 1 and failed.to_dict()["usage"]["cost"] == "unknown"
    cid = h.store.current_conversation()
    for n, summary in enumerate((answered, failed)):  # as the runtime records them
        h.store.start_turn(f"turn{n}", cid, "do it")
        h.store.finish_turn(f"turn{n}", summary.status.value, summary.to_dict())
    conversation = h.store.conversation_usage(cid)
    assert conversation.cost == 0.5 and conversation.total_tokens == 12


async def test_a_request_never_sent_is_not_counted(workspace: Path) -> None:
    from forge_lsp.domain.retry import CREDENTIALS, SCRIPT, ModelError

    for kind in (CREDENTIALS, SCRIPT):
        h = Harness(workspace, FakeModel([ModelError("OPENAI_API_KEY is not set", False, kind=kind)]))
        summary = await h.run()
        assert summary.status.value == "failed" and summary.requests == 0, kind
