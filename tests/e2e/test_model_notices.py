"""What the editor shows of a local model server that drops the tools or cuts a reply (issue 38): a notification
once, the log's lines, the forge/event, and forge.run's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient
from test_lsp import command, until

from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(90)


def listen(client: LanguageClient) -> list[Any]:
    events: list[Any] = []

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        events.append(params)

    return events


async def test_a_server_that_drops_the_tools_is_one_notification(client: LanguageClient, ws: Path) -> None:
    events = listen(client)
    (ws / "a.txt").write_text("alpha\n")
    read = {"tool": "read", "arguments": json.dumps({"file_path": "a.txt"})}
    long = " ".join(f"word{i}" for i in range(30))
    with OpenAIStub([read, {"text": long}], server="llama-server", template_tools=False) as stub:
        (ws / ".forge.toml").write_text(f'model = "openai/smollm2"\napi_base = "{stub.url}"\nmax_tokens = 8\n')
        first = await command(client, "forge.run", {"prompt": "what is in a.txt?"})
        second = await command(client, "forge.run", {"prompt": "and now?"})
    assert first["status"] == "completed" and first["toolCalls"] == 0 and first["filesChanged"] == 0
    assert second["repliesCut"] == 1
    await until(lambda: sum(m.message.startswith("■ turn") for m in client.log_messages) == 2)
    dropped = [m for m in client.messages if "does not pass tools to the model" in m.message]
    assert len(dropped) == 1 and dropped[0].message.startswith("Forge: the model server reported ")
    cut = [m for m in client.messages if "cut at the token limit (max_tokens = 8)" in m.message]
    assert len(cut) == 1
    ends = [m.message for m in client.log_messages if m.message.startswith("■ turn")]
    assert ends[1].startswith("■ turn completed: 1 request, 0 tool calls, 0 failures, 0 files changed, 1 reply cut")
    codes = [e.code for e in events if e.type == "modelNotice"]
    assert codes.count("toolsDropped") == 1 and codes.count("replyCut") == 1
