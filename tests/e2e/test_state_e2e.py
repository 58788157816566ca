"""Hostile state and files through the real server: a damaged state file, a FIFO in the workspace."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from conftest import write_script

pytestmark = pytest.mark.timeout(90)


async def command(client: LanguageClient, name: str, arg: Any = None) -> Any:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=[arg or {}]))


async def test_forge_run_on_a_damaged_state_file_moves_it_aside_and_completes(client: LanguageClient, ws: Path) -> None:
    (ws / ".forge").mkdir(exist_ok=True)
    (ws / ".forge" / "state.sqlite3").write_bytes(b"not a database " * 300)
    write_script(ws, {"text": "hello back"})
    result = await command(client, "forge.run", {"prompt": "hi"})
    assert result["status"] == "completed" and result["text"] == "hello back"
    moved = [p.name for p in (ws / ".forge").iterdir() if p.name.startswith("state.sqlite3.damaged-")]
    assert len(moved) == 1
    shown = [m.message for m in client.messages if "damaged" in m.message]
    assert len(shown) == 1 and moved[0] in shown[0]
    status = await command(client, "forge.status")
    assert status["running"] is False


async def test_a_read_of_a_fifo_fails_at_once_and_the_server_keeps_answering(client: LanguageClient, ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    write_script(ws, {"tool_calls": [{"name": "read", "arguments": {"file_path": "pipe"}}]}, {"text": "gave up"})
    # Before the fix the read blocked the event loop: forge.run never answered (the tool timeout is 300 s).
    result = await asyncio.wait_for(command(client, "forge.run", {"prompt": "read the pipe"}), 50)
    assert result["status"] == "completed" and result["failures"] == 1
    status = await asyncio.wait_for(command(client, "forge.status"), 5)
    assert status["running"] is False


async def test_5000_streamed_chunks_arrive_as_few_assistant_text_events_whole(client: LanguageClient, ws: Path) -> None:
    texts: list[str] = []

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        if params.type == "assistantText":
            texts.append(params.text)

    reply = " ".join(f"w{i}" for i in range(5000))  # the scripted model streams it word by word
    write_script(ws, {"text": reply})
    started = time.monotonic()
    result = await command(client, "forge.run", {"prompt": "talk"})
    duration = time.monotonic() - started
    assert result["status"] == "completed" and result["text"] == reply
    assert "".join(texts) == reply
    assert len(texts) <= duration * 20 + 2, (len(texts), duration)
