"""Sessions, through the public protocols: two ACP sessions and an LSP conversation in one workspace,
all three live at once, each keep their own "Allow for this conversation" answers and todo list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from lsprotocol import types as t
from pygls.lsp.client import LanguageClient
from test_acp import Recorder, agent_env, start, workspace_with

from support import forkserver

pytestmark = pytest.mark.timeout(120)

ALWAYS = "Allow for this conversation"


def deploy(log: Path) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": f"echo deploy >> {log}"}}]}


def todo_write(content: str) -> dict[str, Any]:
    todos = [{"content": content, "status": "completed"}]  # done: no pending-todos reminder
    return {"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}]}


TODO_READ = {"tool_calls": [{"name": "todo_read", "arguments": {}}]}


class Editor:
    """An LSP client as an editor is: Allow for this conversation to every question, each question kept."""

    def __init__(self) -> None:
        self.client = LanguageClient("sessions-test", "1")
        self.questions: list[str] = []
        self.events: list[dict[str, Any]] = []

        @self.client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
        def ask(params: t.ShowMessageRequestParams) -> t.MessageActionItem | None:
            self.questions.append(params.message)
            titles = [a.title for a in params.actions or []]
            return t.MessageActionItem(title=ALWAYS) if ALWAYS in titles else None

        @self.client.feature("forge/event")
        def event(params: Any) -> None:
            self.events.append(
                {"type": params.type, "tool": getattr(params, "tool", None), "output": getattr(params, "output", None)}
            )

    async def start(self, root: Path) -> None:
        await self.client.start_io(*forkserver.command(), env=agent_env())
        await self.client.initialize_async(
            t.InitializeParams(
                capabilities=t.ClientCapabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            )
        )
        self.client.initialized(t.InitializedParams())

    async def run(self, prompt: str) -> dict[str, Any]:
        params = t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": prompt, "model": "scripted/lsp.json"}])
        result = await self.client.workspace_execute_command_async(params)
        assert isinstance(result, dict)
        return result

    def todo_reads(self) -> list[str]:
        return [str(e["output"]) for e in self.events if e["type"] == "toolCallFinished" and e["tool"] == "todo_read"]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def todo_read_outputs(client: Recorder) -> list[str]:
    """What each todo_read answered, in order (the ACP client sees it as the call's content)."""
    reads = {u.tool_call_id for u in client.of("tool_call") if u.title == "todo_read"}
    return [u.content[0].content.text for u in client.of("tool_call_update") if u.tool_call_id in reads and u.content]


async def test_two_acp_sessions_and_an_lsp_conversation_keep_their_own_answers_and_todos(workspace: Path) -> None:
    log = workspace / "deploys.log"
    (workspace / "lsp.json").write_text(
        json.dumps(
            {
                "responses": [
                    deploy(log),
                    TODO_READ,
                    {"text": "lsp 1"},
                    deploy(log),
                    todo_write("lsp plan"),
                    TODO_READ,
                    {"text": "lsp 2"},
                ]
            }
        )
    )
    workspace_with(
        workspace,
        # ACP session A, first prompt: its plan, and the deploy allowed for its conversation.
        todo_write("plan of A"),
        deploy(log),
        {"text": "a 1"},
        # ACP session B: asked again; no plan of its own yet.
        deploy(log),
        TODO_READ,
        {"text": "b 1"},
        # ACP session A again (after the editor's turns): not asked again; its own plan.
        deploy(log),
        TODO_READ,
        {"text": "a 2"},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    acp_client = Recorder(answer="allow_always")
    editor = Editor()
    ctx, conn, _proc, _ = await start(acp_client)
    try:
        await editor.start(workspace)
        a = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        b = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=a.session_id, prompt=[text_block("plan and deploy")])
        asked_a = len(acp_client.permissions)
        await conn.prompt(session_id=b.session_id, prompt=[text_block("deploy")])
        asked_b = len(acp_client.permissions) - asked_a
        # The editor's conversation in the same workspace, while both ACP sessions are open.
        first = await editor.run("deploy")
        second = await editor.run("deploy again and plan")
        await conn.prompt(session_id=a.session_id, prompt=[text_block("deploy again")])
        asked_a_again = len(acp_client.permissions) - asked_a - asked_b
    finally:
        try:
            await editor.stop()
        finally:
            await ctx.__aexit__(None, None, None)
    assert first["status"] == second["status"] == "completed"
    assert log.read_text() == "deploy\n" * 5
    # "Allow for this conversation" holds in its own conversation only: A asked once for two deploys,
    # B asked for its own, and the editor asked once for its two turns (its conversation, not A's or B's).
    assert (asked_a, asked_b, asked_a_again) == (1, 1, 0)
    assert len(editor.questions) == 1 and "echo deploy" in editor.questions[0]
    # Each todo list is its own: B and the editor's first turn see none; the editor then its own, A its own.
    b_read, a_read = todo_read_outputs(acp_client)
    assert b_read == "(no todos)" and "plan of A" in a_read and "lsp plan" not in a_read
    lsp_first, lsp_second = editor.todo_reads()
    assert lsp_first == "(no todos)" and "lsp plan" in lsp_second and "plan of A" not in lsp_second
