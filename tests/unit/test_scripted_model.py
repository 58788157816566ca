"""The scripted model through the real litellm call path (custom provider, streaming)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.retry import ModelError
from forge_lsp.llm import scripted
from forge_lsp.llm.litellm_adapter import LiteLLMModel, classify, library_loaded, resolve_model, warm_up, warm_up_delay


@pytest.fixture(autouse=True)
def _litellm_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about litellm's path: the suite's servers serve scripts without it (tests/conftest.py)."""
    monkeypatch.setenv(scripted.MODE_ENV, "litellm")


def script(root: Path, *responses: object, name: str = "s.json") -> str:
    (root / name).write_text(json.dumps({"responses": list(responses)}))
    return f"scripted/{name}"


async def test_text_and_tool_calls_stream_through_litellm(workspace: Path) -> None:
    model = script(workspace, {"text": "Let me run it.", "tool_calls": [{"name": "shell", "arguments": {"command": "ls -la"}}]})
    llm = LiteLLMModel(ForgeConfig(model=model), workspace)
    pieces: list[str] = []
    reply = await llm.complete([{"role": "user", "content": "hi"}], [], pieces.append)
    assert reply.text == "Let me run it."
    assert len(pieces) > 1 and "".join(pieces) == reply.text
    (call,) = reply.tool_calls
    assert call.name == "shell" and call.arguments == {"command": "ls -la"}
    assert reply.finish_reason == "tool_calls"


async def test_reasoning_streams_first_and_stays_on_the_reply(workspace: Path) -> None:
    model = script(workspace, {"reasoning": "I think a lot.", "text": "Short answer."})
    llm = LiteLLMModel(ForgeConfig(model=model), workspace)
    order: list[tuple[str, str]] = []
    reply = await llm.complete(
        [{"role": "user", "content": "hi"}],
        [],
        lambda p: order.append(("text", p)),
        on_reasoning=lambda p: order.append(("reasoning", p)),
    )
    assert reply.reasoning == "I think a lot." and reply.text == "Short answer."
    assert "".join(p for k, p in order if k == "reasoning") == "I think a lot."
    kinds = [k for k, _ in order]
    assert kinds == ["reasoning"] * kinds.count("reasoning") + ["text"] * kinds.count("text")  # the reasoning first
    assert reply.to_message().to_dict()["reasoning_content"] == "I think a lot."


async def test_past_the_end_answers_done(workspace: Path) -> None:
    llm = LiteLLMModel(ForgeConfig(model=script(workspace, {"text": "one"})), workspace)
    assert (await llm.complete([{"role": "user", "content": "x"}], [], lambda _: None)).text == "one"
    assert (await llm.complete([{"role": "user", "content": "x"}], [], lambda _: None)).text == "done"


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (500, True), (503, True), (401, False), (403, False)])
async def test_scripted_errors_are_classified(workspace: Path, status: int, retryable: bool) -> None:
    name = f"e{status}.json"
    llm = LiteLLMModel(ForgeConfig(model=script(workspace, {"error": {"status": status}}, name=name)), workspace)
    with pytest.raises(ModelError) as info:
        await llm.complete([{"role": "user", "content": "x"}], [], lambda _: None)
    assert info.value.status == status
    assert info.value.retryable is retryable


async def test_missing_script_is_a_clear_non_retryable_error(workspace: Path) -> None:
    llm = LiteLLMModel(ForgeConfig(model="scripted/nope.json"), workspace)
    with pytest.raises(ModelError) as info:
        await llm.complete([{"role": "user", "content": "x"}], [], lambda _: None)
    assert not info.value.retryable and info.value.kind == "script" and info.value.status is None
    said = str(info.value)
    assert f"the script file {workspace.resolve() / 'nope.json'} does not exist" in said, said
    assert "HTTP" not in said and "rejected" not in said and "//" not in said, said
    assert "(model scripted/nope.json)" in said, said


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[{"text": "hi"}]', "must hold an object with a 'responses' list"),
        ('{"responses": [1]}', "entry 0 of"),
        # A misspelt key was an empty reply: retried, the script moved on, the turn passed (a newcomer's report).
        ('{"responses": [{"txt": "oops"}]}', "has an unknown key 'txt' (an entry may have: text, tool_calls,"),
        ('{"responses": [{"tool_calls": [{"nmae": "shell"}]}]}', "tool_calls[0] must be an object with a 'name'"),
        ('{"responses": [{"tool_calls": [{"name": "shell", "args": {}}]}]}', "tool_calls[0] has an unknown key 'args'"),
        ('{"responses": [{"tool_calls": {"name": "shell"}}]}', "tool_calls must be a list of calls"),
    ],
)
async def test_a_malformed_script_is_named_once_as_the_scripted_models(workspace: Path, text: str, why: str) -> None:
    (workspace / "bad.json").write_text(text)
    llm = LiteLLMModel(ForgeConfig(model="scripted/bad.json"), workspace)
    with pytest.raises(ModelError) as info:
        await llm.complete([{"role": "user", "content": "x"}], [], lambda _: None)
    said = str(info.value)
    assert why in said and info.value.kind == "script", said
    assert said.count("scripted model") == 1, said  # was "scripted model: scripted model: ..."


def test_relative_script_resolves_against_workspace(workspace: Path) -> None:
    assert resolve_model("scripted/.forge/demo.json", workspace) == f"scripted/{workspace.resolve()}/.forge/demo.json"
    assert resolve_model("scripted/demo", workspace) == "scripted/demo"
    assert resolve_model("openai/gpt-4o", workspace) == "openai/gpt-4o"


def test_classify_transport_errors() -> None:
    assert classify(ConnectionResetError("reset"), (429,)).retryable
    assert classify(TimeoutError("slow"), (429,)).retryable
    assert not classify(ValueError("bad"), (429,)).retryable


@pytest.mark.parametrize(
    ("env", "delay"),
    [
        ({}, 0.0),  # at `initialized`: a first turn sent right away finds the import under way
        ({"FORGE_LSP_WARMUP_DELAY": "0.2"}, 0.2),
        ({"FORGE_LSP_WARMUP_DELAY": "off"}, None),
        ({"FORGE_LSP_WARMUP_DELAY": "-1"}, None),
        ({"FORGE_LSP_WARMUP_DELAY": "soon"}, 0.0),
        ({"FORGE_LSP_PRELOAD": "1"}, 0.0),
        ({"FORGE_LSP_PRELOAD": "0"}, None),
        ({"FORGE_LSP_PRELOAD": "1", "FORGE_LSP_WARMUP_DELAY": "3"}, 3.0),
    ],
)
def test_warm_up_delay_from_the_environment(env: dict[str, str], delay: float | None) -> None:
    assert warm_up_delay(env) == delay


def test_warm_up_loads_litellm_and_keeps_no_script_position() -> None:
    warm_up().join(90)
    assert library_loaded()
    # Its request went to the private warm-up script, which keeps no position (no user script moved on).
    assert scripted.WARM_UP not in scripted.CURSOR.positions
    assert scripted.next_entry(scripted.WARM_UP) == {"text": "ready"}


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_script_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    # The user's own config may name any file: a FIFO there blocked the model call's thread forever, and
    # /dev/zero was read until memory ran out.
    import os

    if kind == "fifo":
        path = tmp_path / "script.json"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(scripted.ScriptError, match="not a regular file"):
        scripted.load_script(str(path))


PARITY_ENTRIES: list[object] = [
    {"error": {"status": 429, "retry_after": 1.5}},
    {"error": {"status": 500, "message": "boom"}},
    {"error": {"status": 401}},
    {"error": {"status": 400, "message": "bad"}},
    {"error": {"status": 404}},
    {"error": {"status": 408}},
    {"error": "plain"},
    {"text": "hello there world", "reasoning": "think hard"},
    {
        "tool_calls": [
            {"id": "c1", "name": "read", "arguments": {"path": "a"}},
            {"id": "c2", "name": "shell", "arguments": "{bad"},
        ]
    },
    {"text": "x", "usage": {"prompt_tokens": 5, "completion_tokens": 2, "cached_tokens": 3}},
    {"text": ""},
    7,
]


async def _serve_all(workspace: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    monkeypatch.setenv(scripted.MODE_ENV, mode)
    scripted.CURSOR.reset()
    llm = LiteLLMModel(ForgeConfig(model=script(workspace, *PARITY_ENTRIES)), workspace)
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    served: list[object] = []
    for _ in range(len(PARITY_ENTRIES) + 1):
        pieces: list[str] = []
        try:
            reply = await llm.complete([{"role": "user", "content": "hi"}], tools, pieces.append, pieces.append)
            calls = [(c.id, c.name, c.arguments_json) for c in reply.tool_calls]
            served.append((reply.text, reply.reasoning, calls, reply.finish_reason, reply.usage, pieces))
        except ModelError as exc:
            served.append((str(exc), exc.retryable, exc.status, exc.kind))
    return served


async def test_the_direct_path_serves_what_litellms_path_serves(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FORGE_LSP_SCRIPTED=direct (the suite's servers) answers every kind of entry as litellm's path does: text and
    reasoning piece by piece, tool calls, usage, each error's words, status, kind and retryability."""
    through_litellm = await _serve_all(workspace, "litellm", monkeypatch)
    direct = await _serve_all(workspace, "direct", monkeypatch)
    assert direct == through_litellm
    assert through_litellm[5] == (
        "model request timed out after 300 s (model scripted/s.json): set request_timeout_secs to wait longer",
        True,
        None,
        "timeout",
    )
    assert through_litellm[-1][0] == "done"


def test_the_direct_path_warms_nothing_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(scripted.MODE_ENV, "direct")
    assert warm_up() is None
    assert scripted.served_directly("scripted/x.json") and not scripted.served_directly("openai/gpt-4o")
    monkeypatch.setenv(scripted.MODE_ENV, "litellm")
    assert not scripted.served_directly("scripted/x.json")
