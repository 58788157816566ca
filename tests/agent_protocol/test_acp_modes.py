"""ACP session modes are the agents: advertised on session/new and session/load, changed by session/set_mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from test_acp import Recorder, start, workspace_with

pytestmark = pytest.mark.timeout(120)

WRITE = {"tool_calls": [{"name": "write", "arguments": {"file_path": "notes.txt", "content": "hi\n"}}]}


def failed_outputs(client: Recorder) -> list[str]:
    return [
        "".join(getattr(c.content, "text", "") for c in u.content or [])
        for u in client.of("tool_call_update")
        if u.status == "failed"
    ]


async def test_modes_are_the_agents_and_set_mode_changes_the_tools(workspace: Path) -> None:
    workspace_with(workspace, WRITE, {"text": "sage could not"}, WRITE, {"text": "forge wrote it"})
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        modes: Any = session.modes
        assert modes.current_mode_id == "forge"
        assert [(m.id, m.name) for m in modes.available_modes] == [("forge", "Forge"), ("muse", "Muse"), ("sage", "Sage")]
        assert all(m.description for m in modes.available_modes)
        sid = session.session_id
        await conn.set_session_mode(session_id=sid, mode_id="sage")
        assert [u.current_mode_id for u in client.of("current_mode_update")] == ["sage"]
        await conn.prompt(session_id=sid, prompt=[text_block("write notes.txt")])
        assert not (workspace / "notes.txt").exists()
        assert any("tool write is not available to agent sage" in out for out in failed_outputs(client))
        with pytest.raises(RequestError, match="unknown agent 'nope'; agents: forge, muse, sage"):
            await conn.set_session_mode(session_id=sid, mode_id="nope")
        await conn.set_session_mode(session_id=sid, mode_id="forge")
        result = await conn.prompt(session_id=sid, prompt=[text_block("write notes.txt")])
        assert result.stop_reason == "end_turn" and (workspace / "notes.txt").read_text() == "hi\n"
        await conn.set_session_mode(session_id=sid, mode_id="muse")
    finally:
        await ctx.__aexit__(None, None, None)
    # The mode is kept with the conversation: a new agent process loads it with its mode.
    again = Recorder()
    ctx, conn, proc, _ = await start(again)
    try:
        loaded = await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert loaded.modes is not None and loaded.modes.current_mode_id == "muse"
        other = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert other.modes is not None and other.modes.current_mode_id == "forge"
    finally:
        await ctx.__aexit__(None, None, None)
