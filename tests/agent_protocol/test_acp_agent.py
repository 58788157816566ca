"""The ACP agent in-process, driven by a client connection that is slow to take session updates
(a busy editor: the agent's updates queue up behind it while the turn goes on)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestPermissionResponse, text_block
from acp.schema import AllowedOutcome, ClientCapabilities
from test_acp import shell, workspace_with

from forge_lsp.acp.agent import ForgeAgent

pytestmark = pytest.mark.timeout(60)


class SlowClient:
    """Takes each session/update in `delay` seconds; records tool_call and permission requests in order."""

    def __init__(self, answer: str = "allow_once", delay: float = 0.02) -> None:
        self.answer = answer
        self.delay = delay
        self.updates: list[Any] = []
        self.order: list[str] = []
        self.permissions: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await asyncio.sleep(self.delay)
        self.updates.append(update)
        if update.session_update == "tool_call":
            self.order.append(f"tool_call {update.tool_call_id}")

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.permissions.append(tool_call)
        self.order.append(f"permission {tool_call.tool_call_id}")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]


async def run_prompt(agent: ForgeAgent, client: SlowClient, workspace: Path, prompt: str) -> Any:
    agent.on_connect(client)  # type: ignore[arg-type]
    await agent.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    session = await agent.new_session(cwd=str(workspace), mcp_servers=[])
    try:
        return await agent.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
    finally:
        agent.close()


async def test_a_permission_request_names_its_call_and_comes_after_it_with_a_slow_client(workspace: Path) -> None:
    words = " ".join(f"word{i}" for i in range(40))  # streamed first: updates still on their way when it asks
    deploy = shell("echo deploy now")["tool_calls"][0]
    workspace_with(
        workspace,
        shell("echo before"),
        {"text": words, "tool_calls": [deploy]},
        {"text": "deployed"},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    client = SlowClient(answer="allow_once")
    result = await run_prompt(ForgeAgent(), client, workspace, "deploy")
    assert result.stop_reason == "end_turn"
    before, deploying = (c.tool_call_id for c in client.of("tool_call"))
    assert client.order == [f"tool_call {before}", f"tool_call {deploying}", f"permission {deploying}"]
    assert "echo deploy now" in client.permissions[0].title
    done = [u for u in client.of("tool_call_update") if u.tool_call_id == deploying]
    assert done[-1].status == "completed"


async def test_the_first_call_of_a_turn_is_asked_about_by_its_own_id(workspace: Path) -> None:
    workspace_with(
        workspace,
        {"text": "deploying", **shell("echo deploy now")},
        {"text": "ok"},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    client = SlowClient(answer="reject_once")
    await run_prompt(ForgeAgent(), client, workspace, "deploy")
    (call,) = client.of("tool_call")
    assert client.order == [f"tool_call {call.tool_call_id}", f"permission {call.tool_call_id}"]


async def test_a_prompt_while_a_turn_runs_in_the_workspace_ends_saying_so(workspace: Path) -> None:
    marker = workspace / "started"
    workspace_with(workspace, shell(f"touch {marker}; exec sleep 30"))
    client = SlowClient(delay=0)
    agent = ForgeAgent()
    agent.on_connect(client)  # type: ignore[arg-type]
    await agent.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    first = await agent.new_session(cwd=str(workspace), mcp_servers=[])
    second = await agent.new_session(cwd=str(workspace), mcp_servers=[])
    try:
        turn = asyncio.ensure_future(agent.prompt(session_id=first.session_id, prompt=[text_block("wait")]))
        for _ in range(400):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        refused = await agent.prompt(session_id=second.session_id, prompt=[text_block("hi")])
        await agent.cancel(session_id=first.session_id)
        assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
    finally:
        agent.close()
    assert refused.stop_reason == "end_turn" and refused.field_meta["refused"]["kind"] == "TurnInProgress"
    said = "".join(u.content.text for u in client.of("agent_message_chunk"))
    assert "The prompt was not run: a turn is already running" in said


async def test_a_prompt_right_after_a_cancel_waits_for_the_turn_and_its_lock(workspace: Path) -> None:
    # The cancelled turn's task is done a moment before its workspace's turn lock is released: a prompt that
    # comes in that moment must wait for both, not be refused as "a turn is running in this workspace".
    workspace_with(workspace, shell("sleep 30"), {"text": "Next answer."})
    client = SlowClient(delay=0)
    agent = ForgeAgent()
    agent.on_connect(client)  # type: ignore[arg-type]
    await agent.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    session = await agent.new_session(cwd=str(workspace), mcp_servers=[])
    runtime = agent.session(session.session_id).runtime
    try:
        first = asyncio.ensure_future(agent.prompt(session_id=session.session_id, prompt=[text_block("wait")]))
        for _ in range(1000):
            if client.of("tool_call"):
                break
            await asyncio.sleep(0.01)
        await agent.cancel(session_id=session.session_id)
        while runtime.running:  # the task is done; run() has not released the lock yet
            await asyncio.sleep(0)
        second = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("go on")]), 20)
        cancelled = await first
    finally:
        agent.close()
    assert cancelled.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn" and not (second.field_meta or {}).get("refused"), second.field_meta
