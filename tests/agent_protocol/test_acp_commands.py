"""ACP slash commands: available_commands_update after session/new and session/load, and a "/name args" prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import ClientCapabilities, EmbeddedResourceContentBlock, TextResourceContents
from test_acp import workspace_with

from forge_lsp.acp.agent import ForgeAgent

from support import forkserver

pytestmark = pytest.mark.timeout(60)

GREET = "---\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n"


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


def with_command(workspace: Path, *responses: Any) -> Path:
    folder = workspace / ".forge" / "commands"
    folder.mkdir(parents=True)
    (folder / "greet.md").write_text(GREET)
    return workspace_with(workspace, *responses)  # trusted after the command is written: trust covers it


async def until(condition: Any) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not in time")


async def connect(agent: ForgeAgent, client: Recorder) -> None:
    agent.on_connect(client)  # type: ignore[arg-type]
    await agent.initialize(protocol_version=1, client_capabilities=ClientCapabilities())


def prompt_sent(workspace: Path) -> str:
    (path,) = (workspace / ".forge" / "transcripts").glob("*.md")
    return path.read_text().split("## Prompt\n\n", 1)[1]


async def test_commands_are_announced_after_new_and_load(workspace: Path) -> None:
    with_command(workspace, {"text": "Bonjour"})
    agent, client = ForgeAgent(), Recorder()
    await connect(agent, client)
    try:
        session = await agent.new_session(cwd=str(workspace), mcp_servers=[])
        await until(lambda: client.of("available_commands_update"))
        (update,) = client.of("available_commands_update")
        by_name = {c.name: c for c in update.available_commands}
        assert sorted(by_name) == ["explain", "greet", "review", "test"]
        assert by_name["greet"].description == "Greet someone" and by_name["greet"].input.root.hint
        await agent.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        client.updates.clear()
        await agent.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
        await until(lambda: client.of("available_commands_update"))
        # announced after the replayed history
        assert client.updates[-1].session_update == "available_commands_update"
    finally:
        agent.close()


async def test_a_slash_prompt_runs_the_command_with_the_context_after_it(workspace: Path) -> None:
    with_command(workspace, {"text": "Bonjour"})
    agent, client = ForgeAgent(), Recorder()
    await connect(agent, client)
    try:
        session = await agent.new_session(cwd=str(workspace), mcp_servers=[])
        attached = EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///notes.txt", text="Ada is a friend")
        )
        result = await agent.prompt(session_id=session.session_id, prompt=[text_block("/greet Ada"), attached])
        assert result.stop_reason == "end_turn" and "Bonjour" in client.text()
        sent = prompt_sent(workspace)
        assert sent.startswith("Say hello to Ada in French.\n\nContext from file:///notes.txt:\n```\nAda is a friend\n```")
    finally:
        agent.close()


async def test_an_unknown_command_is_said_in_the_chat_and_runs_nothing(workspace: Path) -> None:
    with_command(workspace, {"text": "never"})
    agent, client = ForgeAgent(), Recorder()
    await connect(agent, client)
    try:
        session = await agent.new_session(cwd=str(workspace), mcp_servers=[])
        result = await agent.prompt(session_id=session.session_id, prompt=[text_block("/nope x")])
        assert result.stop_reason == "end_turn"
        assert "The prompt was not run: unknown command /nope; the commands are /explain, /greet, /review, /test" in client.text()
        assert not (workspace / ".forge" / "transcripts").exists()
    finally:
        agent.close()


def test_the_session_new_answer_comes_before_the_commands_on_the_wire(workspace: Path) -> None:
    """A client learns of the session (the answer) before an update about it: the raw stdout, in order."""
    import json
    import subprocess

    from test_acp import agent_env

    with_command(workspace, {"text": "x"})
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    proc = subprocess.Popen(
        [*forkserver.command(), "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=agent_env(),
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        seen: list[str] = []
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        while "available_commands_update" not in seen:
            message = json.loads(proc.stdout.readline())
            kind = message.get("params", {}).get("update", {}).get("sessionUpdate") or f"answer {message.get('id')}"
            seen.append(kind)
        assert seen.index("answer 2") < seen.index("available_commands_update"), seen
    finally:
        proc.kill()
        proc.wait()


async def test_a_command_file_changed_mid_session_is_announced_again(workspace: Path) -> None:
    """The Python ACP client over stdio: a command the user adds to (then removes from) their commands folder
    while a session is open is sent again as available_commands_update, without a prompt in between; a
    /name of it then runs."""
    import os

    from test_acp import Recorder as WireRecorder
    from test_acp import start

    with_command(workspace, {"text": "Ciao"})
    user_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "commands"
    user_dir.mkdir(parents=True, exist_ok=True)
    client = WireRecorder()
    ctx, conn = (await start(client))[:2]

    def names(update: Any) -> list[str]:
        return sorted(c.name for c in update.available_commands)

    async def announced(count: int) -> list[Any]:
        for _ in range(150):  # the agent looks at the config files about every 2 s
            if len(got := [u for u in client.updates if u.session_update == "available_commands_update"]) >= count:
                return got
            await asyncio.sleep(0.1)
        raise AssertionError(f"no available_commands_update #{count}: {client.updates}")

    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert names((await announced(1))[0]) == ["explain", "greet", "review", "test"]
        (user_dir / "italian.md").write_text("---\ndescription: Say it in Italian\n---\nSay {{args}} in Italian.\n")
        second = (await announced(2))[1]
        assert names(second) == ["explain", "greet", "italian", "review", "test"]
        assert {c.name: c.description for c in second.available_commands}["italian"] == "Say it in Italian"
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("/italian good morning")])
        assert result.stop_reason == "end_turn" and "Ciao" in "".join(
            u.content.text for u in client.updates if u.session_update == "agent_message_chunk"
        )
        (user_dir / "italian.md").unlink()
        assert names((await announced(3))[2]) == ["explain", "greet", "review", "test"]
        await asyncio.sleep(2.5)  # a round of the check later: nothing changed since, nothing more is sent
        assert len([u for u in client.updates if u.session_update == "available_commands_update"]) == 3
    finally:
        await ctx.__aexit__(None, None, None)


async def test_a_workspace_command_added_mid_session_is_announced_once_the_workspace_is_trusted_again(
    workspace: Path,
) -> None:
    """A command added to .forge/commands/ while a session is open untrusts the workspace: the session is told
    the commands without the workspace's. Trusting it again (`forge-lsp trust DIR`, no command file touched
    since) is announced too: the session's commands are the workspace's again, the new one included."""
    from test_acp import Recorder as WireRecorder
    from test_acp import start, trust_workspace

    with_command(workspace, {"text": "Ciao"})
    client = WireRecorder()
    ctx, conn = (await start(client))[:2]

    def announced() -> list[list[str]]:
        return [
            sorted(c.name for c in u.available_commands)
            for u in client.updates
            if u.session_update == "available_commands_update"
        ]

    async def until_announced(count: int) -> list[str]:
        for _ in range(150):  # the agent looks about every 2 s
            if len(got := announced()) >= count:
                return got[count - 1]
            await asyncio.sleep(0.1)
        raise AssertionError(f"no available_commands_update #{count}: {announced()}")

    try:
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert await until_announced(1) == ["explain", "greet", "review", "test"]
        (workspace / ".forge" / "commands" / "bye.md").write_text("---\ndescription: Say goodbye\n---\nBye.\n")
        assert await until_announced(2) == ["explain", "review", "test"]  # untrusted: none of the workspace's
        trust_workspace(workspace)
        assert await until_announced(3) == ["bye", "explain", "greet", "review", "test"]
    finally:
        await ctx.__aexit__(None, None, None)
