"""The user's hooks through `forge-lsp acp` (issue 37): the agent-client-protocol package's client drives the real
agent in a subprocess, with a user config.toml of [[hooks]]."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from test_acp import Recorder, start, workspace_with

from support.hooks import GUARD, call
from support.processes import left_running_in, processes_in

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config.toml of the agents these tests start (agent_env copies the environment then)."""
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "guard.py").write_text(GUARD)
    path = folder / "config.toml"
    path.write_text("")
    monkeypatch.setenv("FORGE_LSP_CONFIG", str(path))
    return path


async def prompt(workspace: Path, text: str = "go") -> tuple[Any, Recorder]:
    client = Recorder()
    ctx, conn, _proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
    finally:
        await ctx.__aexit__(None, None, None)
    return result, client


def updates_of(client: Recorder, call_id_of: str) -> list[Any]:
    (started,) = [c for c in client.of("tool_call") if c.title.startswith(call_id_of) or call_id_of in c.title]
    return [u for u in client.of("tool_call_update") if u.tool_call_id == started.tool_call_id]


async def test_each_hook_event_and_exit_code_in_an_acp_session(workspace: Path, user_config: Path) -> None:
    user_config.write_text(
        f'[[hooks]]\nevent = "pre_tool"\nmatcher = "write"\ncommand = "{sys.executable} {user_config.parent / "guard.py"}"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "shell"\ncommand = "echo \'lint: 2 problems\' >&2; exit 2"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "read"\ncommand = "echo checked by the read hook"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "todo_read"\ncommand = "echo broken >&2; exit 3"\n\n'
        '[[hooks]]\nevent = "stop"\ncommand = "test -e stopped && exit 0; touch stopped; echo \'run the tests first\' >&2; exit 2"\n'
    )
    (workspace / "a.txt").write_text("hello\n")
    workspace_with(
        workspace,
        call("write", file_path="app/.env", content="KEY=1\n"),
        call("shell", command="echo made > made.txt"),
        call("read", file_path="a.txt"),
        call("todo_read"),
        {"text": "Done."},
        {"text": "Tests pass now."},
    )
    result, client = await prompt(workspace)
    assert result.stop_reason == "end_turn"
    forge = result.field_meta["forge"]
    assert (forge["status"], forge["toolCalls"], forge["failures"], forge["requests"]) == ("completed", 4, 2, 6)
    assert not (workspace / "app" / ".env").exists() and (workspace / "made.txt").exists()
    write = updates_of(client, "app/.env")
    assert write[-1].status == "failed" and "Blocked: app/.env holds secrets" in write[-1].content[0].content.text
    assert "**Attempts remaining:** 2" in write[-1].content[1].content.text
    shell = updates_of(client, "echo made")
    assert shell[-1].status == "failed" and "lint: 2 problems" in shell[-1].content[0].content.text
    read = updates_of(client, "a.txt")
    assert read[-1].status == "completed" and "post_tool hook `echo checked by the read hook`: checked by the read hook" in (
        read[-1].content[0].content.text
    )
    text = client.text()
    assert "(forge-lsp: the post_tool hook `echo broken >&2; exit 3` (" in text and "exited 3 (broken)" in text
    assert "(forge-lsp: The stop hook `test -e stopped" in text and "did not let the turn end: run the tests first)" in text
    assert text.index("Done.") < text.index("did not let the turn end") < text.index("Tests pass now.")


async def test_a_stop_hook_that_always_exits_2_is_bounded_by_max_stop_blocks(workspace: Path, user_config: Path) -> None:
    user_config.write_text('[hooks]\nmax_stop_blocks = 1\n\n[[hooks.stop]]\ncommand = "echo never satisfied >&2; exit 2"\n')
    workspace_with(workspace, {"text": "one"}, {"text": "two"}, {"text": "three"})
    result, client = await prompt(workspace)
    assert result.stop_reason == "end_turn" and result.field_meta["forge"]["requests"] == 2
    text = client.text()
    assert text.count("did not let the turn end: never satisfied") == 1
    assert "max_stop_blocks (1) this turn: the turn ends" in text and "three" not in text


async def test_an_untrusted_workspaces_hooks_never_run_and_are_said(workspace: Path, user_config: Path) -> None:
    user_config.write_text('model = "scripted/script.json"\n\n[[hooks]]\nevent = "post_tool"\ncommand = "touch mine"\n')
    (workspace / "script.json").write_text(json.dumps({"responses": [call("shell", command="true"), {"text": "ok"}]}))
    (workspace / ".forge.toml").write_text('[[hooks]]\nevent = "pre_tool"\ncommand = "touch pwned"\n')
    result, client = await prompt(workspace)
    assert result.field_meta["forge"]["status"] == "completed"
    assert not (workspace / "pwned").exists() and (workspace / "mine").exists()
    assert "is not trusted, so these workspace settings are ignored: hooks" in client.text()


async def test_cancel_kills_a_sleeping_hook(workspace: Path, user_config: Path, record_reliability: Any) -> None:
    marker = workspace / "hook-started"
    user_config.write_text(f'[[hooks]]\nevent = "pre_tool"\ncommand = "sleep 300 & touch {marker}; wait"\n')
    workspace_with(workspace, call("shell", command="touch ran"), {"text": "never"})
    client = Recorder()
    ctx, conn, _proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline and not turn.done(), "the hook never started"
            await asyncio.sleep(0.05)
        assert any("sleep 300" in p for p in processes_in(workspace))
        await conn.cancel(session_id=session.session_id)
        result = await asyncio.wait_for(turn, 10)
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "cancelled" and not (workspace / "ran").exists()
    assert left_running_in(workspace) == []
    record_reliability(
        "a pre_tool hook sleeping, with a background child, when the turn is cancelled",
        "session/cancel from an ACP client",
        "the hook's process group killed: no process left in the workspace; the turn cancelled, the call not run",
    )
