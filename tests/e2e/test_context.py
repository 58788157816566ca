"""Context end to end: usage and cost, compaction, conversations (the server in a subprocess)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from conftest import write_script

pytestmark = pytest.mark.timeout(60)


async def command(client: LanguageClient, name: str, arg: Any = None) -> Any:
    args = [arg] if arg is not None else []
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=args))


@pytest.fixture(autouse=True)
def record_events(client: LanguageClient) -> None:
    client.forge_events = []  # type: ignore[attr-defined]

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        client.forge_events.append(params)  # type: ignore[attr-defined]


def events(client: LanguageClient, kind: str) -> list[Any]:
    return [e for e in client.forge_events if e.type == kind]  # type: ignore[attr-defined]


async def test_usage_in_the_result_the_events_the_status_and_the_transcript(client: LanguageClient, ws: Path) -> None:
    write_script(
        ws,
        {"text": "one", "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "cached_tokens": 400}},
        {"text": "two", "usage": {"prompt_tokens": 2000, "completion_tokens": 20}},
    )
    first = await command(client, "forge.run", {"prompt": "first"})
    assert first["usage"] == {"promptTokens": 1000, "completionTokens": 10, "cachedTokens": 400, "cost": "unknown"}
    (finished,) = events(client, "turnFinished")
    assert finished.usage.promptTokens == 1000 and finished.summary.usage.cachedTokens == 400
    (report,) = events(client, "usage")
    assert report.promptTokens == 1000 and report.turn.completionTokens == 10
    second = await command(client, "forge.run", {"prompt": "second"})
    status = await command(client, "forge.status", {})
    assert status["usage"]["lastTurn"] == second["usage"]
    assert status["usage"]["conversation"] == {
        "promptTokens": 3000,
        "completionTokens": 30,
        "cachedTokens": 400,
        "cost": "unknown",
    }
    transcript = (ws / ".forge" / "transcripts" / f"{second['turnId']}.md").read_text()
    assert "usage: 2000 prompt + 20 completion tokens, cost unknown" in transcript


def reads(n: int) -> list[dict[str, Any]]:
    # Each from another line: the same read six times in a row is a loop the turn stops (max_repeated_calls_per_turn).
    return [
        {"text": f"step {i}", "tool_calls": [{"name": "read", "arguments": {"file_path": "big.txt", "start_line": i + 1}}]}
        for i in range(n)
    ]


async def test_compaction_during_a_turn_and_on_demand(client: LanguageClient, ws: Path) -> None:
    (ws / ".forge.toml").write_text(
        'model = "scripted/script.json"\n\n[compact]\nmessage_threshold = 12\nretention_window = 4\ntoken_threshold = 0\n'
    )
    from support.trust import trust_workspace

    trust_workspace(ws)
    (ws / "big.txt").write_text("a line of the file\n" * 200)
    write_script(ws, *reads(12), {"text": "finished"})
    result = await command(client, "forge.run", {"prompt": "go"})
    assert result["status"] == "completed" and result["requests"] == 13
    compacted = events(client, "compacted")
    assert compacted and all(e.messages > 0 and e.afterTokens < e.beforeTokens for e in compacted)
    transcript = (ws / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text()
    assert "## Compacted" in transcript and "the state database keeps them all" in transcript
    write_script(ws, *reads(3), {"text": "more"})
    await command(client, "forge.run", {"prompt": "more"})
    before = len(events(client, "compacted"))
    now = await command(client, "forge.compact", {})
    assert set(now) == {"beforeTokens", "afterTokens", "messages"}
    # The second turn's batches since the last compaction go too: only retention_window (4) messages stay.
    assert now["messages"] > 0 and now["afterTokens"] < now["beforeTokens"]
    assert len(events(client, "compacted")) == before + 1
    again = await command(client, "forge.compact", {})
    assert again["messages"] == 0 and again["afterTokens"] == again["beforeTokens"]


async def test_compact_is_refused_while_a_turn_runs(client: LanguageClient, ws: Path) -> None:
    import asyncio

    from pygls.exceptions import JsonRpcException

    write_script(ws, {"text": "slow", "delay_ms": 3000})
    run = asyncio.ensure_future(command(client, "forge.run", {"prompt": "wait"}))
    for _ in range(100):
        if events(client, "turnStarted"):
            break
        await asyncio.sleep(0.05)
    with pytest.raises(JsonRpcException, match="turn is running"):
        await command(client, "forge.compact", {})
    await command(client, "forge.cancel", {})
    await run


async def test_conversations_listed_opened_and_deleted(client: LanguageClient, ws: Path) -> None:
    import asyncio

    from pygls.exceptions import JsonRpcException

    write_script(ws, {"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "slow", "delay_ms": 3000})
    first = await command(client, "forge.run", {"prompt": "Fix the parser\nit crashes"})
    await command(client, "forge.newConversation", {})
    second = await command(client, "forge.run", {"prompt": "Write the docs"})
    listed = await command(client, "forge.listConversations", {})
    assert [c["title"] for c in listed] == ["Write the docs", "Fix the parser"]
    top = listed[0]
    assert set(top) == {"id", "title", "turns", "lastStatus", "tokens", "updated", "turnFiles"}
    assert top["id"] == second["conversationId"] and top["turns"] == 1 and top["lastStatus"] == "completed"
    assert top["tokens"] == second["usage"]["promptTokens"] + second["usage"]["completionTokens"] > 0
    opened = await command(client, "forge.openConversation", {"id": first["conversationId"]})
    assert opened == {"conversationId": first["conversationId"], "title": "Fix the parser", "turns": 1}
    third = await command(client, "forge.run", {"prompt": "again"})
    assert third["conversationId"] == first["conversationId"]
    with pytest.raises(JsonRpcException, match="no conversation"):
        await command(client, "forge.openConversation", {"id": "nope"})
    with pytest.raises(JsonRpcException, match="needs"):
        await command(client, "forge.deleteConversation", {})
    run = asyncio.ensure_future(command(client, "forge.run", {"prompt": "slow one"}))
    for _ in range(100):
        if len(events(client, "turnStarted")) == 4:
            break
        await asyncio.sleep(0.05)
    with pytest.raises(JsonRpcException, match="turn is running"):
        await command(client, "forge.deleteConversation", {"id": second["conversationId"]})
    await command(client, "forge.cancel", {})
    await run
    deleted = await command(client, "forge.deleteConversation", {"id": second["conversationId"]})
    assert deleted == {"deleted": True, "conversationId": second["conversationId"]}
    assert [c["id"] for c in await command(client, "forge.listConversations", {})] == [first["conversationId"]]


async def test_reasoning_is_streamed_logged_and_in_the_transcript(client: LanguageClient, ws: Path) -> None:
    from test_lsp import until

    (ws / "a.txt").write_text("hello\n")
    write_script(
        ws,
        {
            "reasoning": "The user wants a.txt, so I read it.",
            "text": "Reading.",
            "tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}],
        },
        {"reasoning": "It holds hello.", "text": "It says hello."},
    )
    result = await command(client, "forge.run", {"prompt": "what is in a.txt?"})
    assert result["status"] == "completed"
    kinds = [e.type for e in client.forge_events if e.type in ("reasoning", "assistantText")]  # type: ignore[attr-defined]
    # Each reply's reasoning comes whole, and before its text.
    assert "".join(e.text for e in events(client, "reasoning")) == "The user wants a.txt, so I read it.It holds hello."
    assert kinds.index("assistantText") > kinds.index("reasoning") and kinds[-1] == "assistantText"
    transcript = (ws / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text()
    assert transcript.index("## Reasoning\n\nThe user wants a.txt, so I read it.") < transcript.index("## Assistant\n\nReading.")
    assert transcript.index("### Tool call: read: a.txt") < transcript.index("## Reasoning\n\nIt holds hello.")
    await until(lambda: any(m.message.startswith("■ turn completed") for m in client.log_messages))
    lines = [m.message for m in client.log_messages]
    first = lines.index("  thinking: The user wants a.txt, so I read it.")
    assert first < lines.index("  assistant: Reading.") < lines.index("  thinking: It holds hello.")
