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
