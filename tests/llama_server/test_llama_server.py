"""forge-lsp against the real llama.cpp llama-server with SmolLM2-135M-Instruct (issue 38 item 9).

The model is too small to do a task, so no task's success is asserted: what is checked is forge-lsp's part. The
tools reach the model (the prompt the server evaluated is at least as long as the tool definitions), a tool call
streams through (llama-server's streamed tool-call deltas become one call), tool_choice is sent and honoured, a
reply cut at max_tokens is named, the context window is learnt from the server, and a server whose template
drops the tools is warned about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import Event
from forge_lsp.llm import local_servers
from forge_lsp.llm.litellm_adapter import LiteLLMModel

from support.llama_server import LlamaServer

pytestmark = [pytest.mark.timeout(600)]
MODEL = "openai/smollm2"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local_servers.forget()
    yield
    local_servers.forget()


async def turn(ws: Path, server: LlamaServer, prompt: str, extra: str = "") -> tuple[Any, list[Event]]:
    (ws / ".forge.toml").write_text(
        f'model = "{MODEL}"\napi_base = "{server.url}"\nrequest_timeout_secs = 240\nmax_requests_per_turn = 2\n'
        f"{extra}\n[retry]\nmax_attempts = 2\nmin_delay_ms = 10\n"
    )
    runtime = WorkspaceRuntime(ws, trusted=True)
    events: list[Event] = []
    try:
        summary = await runtime.run(prompt, events.append)
    finally:
        runtime.close()
    return summary, events


def of(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


def schemas(ws: Path) -> list[dict[str, Any]]:
    from forge_lsp.core.runtime import BoundTools
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.registry import ToolRegistry
    from forge_lsp.tools.workspace import Workspace

    return BoundTools(ToolRegistry(), ToolContext(Workspace(ws), ForgeConfig())).schemas()


async def test_the_tools_reach_the_model_and_the_window_is_learnt(llama: LlamaServer, workspace: Path) -> None:
    summary, events = await turn(workspace, llama, "Say hello in one word.", "max_tokens = 16")
    assert summary.status.value == "completed", summary.error
    usage = of(events, "usage")[0].request
    tools = local_servers.tools_tokens(schemas(workspace))
    # The estimate (4 characters a token) is below what SmolLM2's tokenizer makes of JSON: a prompt that carries
    # the tools is at least that long; one without them (the next test) is a fraction of it.
    assert usage.prompt_tokens >= tools, (usage, tools)
    assert [n for n in of(events, "modelNotice") if n.code == "toolsDropped"] == []
    # The window: llama-server's /props says --ctx-size; the system prompt and the tools fill over a quarter of 4096.
    assert await local_servers.server_window(MODEL, llama.url) == llama.ctx
    (fixed,) = [n for n in of(events, "modelNotice") if n.code == "contextFixed"]
    assert "of the 4,096-token context window" in fixed.message


async def test_a_template_without_tools_is_warned_about(llama_own_template: LlamaServer, workspace: Path) -> None:
    summary, events = await turn(workspace, llama_own_template, "Say hello in one word.", "max_tokens = 16")
    assert summary.status.value == "completed", summary.error
    usage = of(events, "usage")[0].request
    (dropped,) = [n for n in of(events, "modelNotice") if n.code == "toolsDropped"]
    assert f"reported {usage.prompt_tokens:,} prompt tokens" in dropped.message and "--jinja" in dropped.message


def asked_before(*paths: str) -> list[dict[str, Any]]:
    """A conversation in which the model answered each earlier request with a read call: SmolLM2-135M follows the
    pattern (the calls without their results: with them it imitates the <tool_response> wrapper instead)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You call tools."}]
    for i, path in enumerate(paths):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"file_path": path})}}
        messages += [{"role": "user", "content": f"Read {path}"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
    return [*messages, {"role": "user", "content": "Read README.md"}]


async def test_a_tool_call_streams_through_and_tool_choice_is_honoured(llama: LlamaServer, workspace: Path) -> None:
    config = ForgeConfig(model=MODEL, api_base=llama.url, max_tokens=80, temperature=0.0, request_timeout_secs=240)
    model = LiteLLMModel(config, workspace)
    tools = schemas(workspace)
    messages = asked_before("a.txt", "b.txt", "c.txt")
    sent: list[dict[str, Any]] = []
    plain = model.request_kwargs

    def choosing(choice: str | None) -> Any:
        def kwargs(litellm: Any, m: list[dict[str, Any]], t: list[dict[str, Any]]) -> dict[str, Any]:
            out = plain(litellm, m, t)
            sent.append(dict(out))
            return out if choice is None else {**out, "tool_choice": choice}

        return kwargs

    # As forge-lsp sends it: streamed, tool_choice "auto"; llama-server's tool-call deltas become one call.
    model.request_kwargs = choosing(None)  # type: ignore[method-assign]
    pieces: list[str] = []
    reply = await model.complete(messages, tools, pieces.append)
    assert sent[-1]["tool_choice"] == "auto" and sent[-1]["stream"] is True
    assert len(reply.tool_calls) == 1, reply
    (call,) = reply.tool_calls
    assert call.name == "read" and call.arguments == {"file_path": "README.md"} and call.id, call
    assert reply.finish_reason == "tool_calls" and not reply.cut
    # "none" is honoured: the same conversation gets no tool call (the model writes the call out as text).
    model.request_kwargs = choosing("none")  # type: ignore[method-assign]
    reply = await model.complete(messages, tools, pieces.append)
    assert reply.tool_calls == () and "README.md" in reply.text


async def test_a_reply_cut_at_max_tokens_is_named(llama: LlamaServer, workspace: Path) -> None:
    summary, events = await turn(workspace, llama, "Write a long story about a lighthouse keeper.", "max_tokens = 6")
    assert summary.replies_cut >= 1, summary
    cut = [n for n in of(events, "modelNotice") if n.code == "replyCut"]
    assert cut and "max_tokens = 6" in cut[0].message
    transcript = next((workspace / ".forge" / "transcripts").glob("*.md")).read_text()
    assert "replies cut at the token limit: " in transcript
