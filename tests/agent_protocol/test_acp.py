"""`forge-lsp acp` end to end: the agent-client-protocol package's client side drives the real agent in a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from acp import RequestPermissionResponse, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from forge_lsp import template_cache

from support import forkserver
from support.trust import trust_workspace

pytestmark = pytest.mark.timeout(90)


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


class Recorder:
    """The client: records every session/update, answers permission with `answer`, offers fs/write when asked."""

    def __init__(self, answer: str = "reject_once", buffers: dict[str, str] | None = None, missing: str | None = None) -> None:
        """missing: what a read of a file the client has no buffer of answers (CodeCompanion answers ""); None: an error."""
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.order: list[str] = []
        """Each tool_call and permission request as it arrived: "tool_call ID", "permission ID"."""
        self.buffers = buffers or {}
        self.missing = missing
        self.answer = answer

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if update.session_update == "tool_call":
            self.order.append(f"tool_call {update.tool_call_id}")

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.permissions.append((tool_call, [o.option_id for o in options]))
        self.order.append(f"permission {tool_call.tool_call_id}")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.writes.append((path, content))
        self.buffers[path] = content  # an editor's buffer, not saved yet
        return WriteTextFileResponse()

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.reads.append(path)
        if path not in self.buffers:
            if self.missing is not None:
                return ReadTextFileResponse(content=self.missing)
            raise RuntimeError("Resource not found")
        return ReadTextFileResponse(content=self.buffers[path])

    def on_connect(self, conn: Any) -> None:
        pass

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


def workspace_with(ws: Path, *responses: Any, toml: str = "") -> Path:
    (ws / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (ws / ".forge.toml").write_text(f'model = "scripted/script.json"\n{toml}\n[retry]\nmin_delay_ms = 1\n')
    trust_workspace(ws)  # as the user would: its scripted model applies
    return ws


def agent_env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "FORGE_LSP_WARMUP_DELAY": "off"}


def servers_cache() -> str:
    """The cache folder of the run's servers (compiled templates), by the server's own rule: a client given a HOME or
    XDG_CACHE_HOME of its own passes this one on to forge-lsp, whose templates are then found made, not compiled
    again (seconds of a core)."""
    return str(template_cache.cache_dir().parent.parent)  # $XDG_CACHE_HOME/forge-lsp/templates


async def start(client: Recorder, fs: bool = False, read: bool = False) -> Any:
    ctx = spawn_agent_process(lambda _agent: client, *forkserver.command(), "acp", env=agent_env())
    conn, proc = await ctx.__aenter__()
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=read, write_text_file=fs))
    init = await conn.initialize(protocol_version=1, client_capabilities=caps)
    return ctx, conn, proc, init


async def test_a_turn_with_retries_then_an_interrupt(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGE_LSP_SCRIPTED", "litellm")  # as a user's runs: through litellm's path (agent_env)
    workspace_with(workspace, {"text": "Let me look.", **shell("exit 1")}, shell("exit 2"), shell("exit 3"))
    client = Recorder()
    ctx, conn, proc, init = await start(client)
    try:
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("fix it")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    meta = result.field_meta
    assert meta["kind"] == "MaxToolFailurePerTurnLimitReached" and meta["limit"] == 3 and meta["errors"] == {"shell": 3}
    assert "Let me look." in client.text() and "Interrupted: Maximum tool failure limit (3)" in client.text()
    calls = client.of("tool_call")
    assert [c.kind for c in calls] == ["execute"] * 3 and all(c.status == "in_progress" for c in calls)
    failed = [u for u in client.of("tool_call_update") if u.status == "failed" and len(u.content or []) == 2]
    notices = [u.content[1].content.text for u in failed]
    assert len(notices) == 3
    assert "**Attempts remaining:** 2" in notices[0] and "**Attempts remaining:** 1" in notices[1]
    assert notices[0].startswith("<retry>Tool call failed") and "command exited with code 1" in failed[0].content[0].content.text
    # One final update per failed call (the error and its notice together): a client shows each once.
    finals = [u.tool_call_id for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert finals == [c.tool_call_id for c in calls]
    assert [u.field_meta for u in failed] == [{"attemptsLeft": n, "limit": 3} for n in (2, 1, 0)]
    assert all(u.raw_output is None for u in failed)
    # Each last update names its call again (title, kind): a client that let go of the turn still can.
    assert [(u.title, u.kind) for u in failed] == [(c.title, "execute") for c in calls]


async def test_request_limit_is_max_turn_requests(workspace: Path) -> None:
    workspace_with(workspace, shell("true"), shell("true"), shell("true"), toml="max_requests_per_turn = 2\n")
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "max_turn_requests" and result.field_meta["limit"] == 2


async def test_permission_asked_and_refused(workspace: Path) -> None:
    workspace_with(
        workspace, shell("echo deploy now > deployed"), {"text": "not deployed"}, toml='[tools.shell]\nconfirm = ["echo deploy*"]'
    )
    client = Recorder(answer="reject_once")
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("deploy")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    ((call, options),) = client.permissions
    assert "echo deploy now" in call.title and options == ["allow_once", "allow_always", "reject_once"]
    assert call.tool_call_id == client.of("tool_call")[0].tool_call_id
    assert not (workspace / "deployed").exists()
    assert any(u.status == "failed" for u in client.of("tool_call_update"))


async def test_the_permission_request_is_about_its_own_call_after_that_call_was_announced(workspace: Path) -> None:
    workspace_with(
        workspace,
        shell("echo before"),
        {"tool_calls": [{"name": "read", "arguments": {"file_path": "script.json"}}, shell("echo deploy now")["tool_calls"][0]]},
        {"text": "deployed"},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    client = Recorder(answer="allow_once")
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("deploy")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    first, second, deploy = (c.tool_call_id for c in client.of("tool_call"))
    assert len({first, second, deploy}) == 3
    assert client.order == [f"tool_call {first}", f"tool_call {second}", f"tool_call {deploy}", f"permission {deploy}"]
    ((call, _),) = client.permissions
    assert "echo deploy now" in call.title


async def test_cancel_stops_the_turn_and_kills_the_shell(workspace: Path) -> None:
    marker = workspace / "sleeping.pid"
    workspace_with(workspace, shell(f"echo $$ > {marker}; exec sleep 30"))
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("wait")]))
        deadline = time.monotonic() + 30
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        pid = int(marker.read_text())
        while not client.of("tool_call") and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        announced_before_cancel = len(client.of("tool_call"))
        started = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        result = await asyncio.wait_for(turn, 10)
        stopped_in = time.monotonic() - started
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "cancelled" and stopped_in < 5
    # The running call was shown while it ran, and ends as failed (not "running" forever); the summary counts it.
    assert announced_before_cancel == 1
    (call,) = client.of("tool_call")
    final = [u for u in client.of("tool_call_update") if u.tool_call_id == call.tool_call_id]
    assert final and final[-1].status == "failed" and "cancelled" in final[-1].content[0].content.text
    assert final[-1].title == call.title and final[-1].kind == "execute"
    assert result.field_meta["forge"]["toolCalls"] == 1
    await asyncio.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or "State:\tZ" in Path(f"/proc/{pid}/status").read_text()


async def test_session_load_after_a_restart_replays_history(workspace: Path) -> None:
    thinking = {"text": "first done", "reasoning": "the echo worked, so I am done"}
    workspace_with(workspace, shell("echo first-result"), thinking, {"text": "second done"})
    first = Recorder()
    ctx, conn, proc, _ = await start(first)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("first prompt")])
    finally:
        await ctx.__aexit__(None, None, None)
    # A new agent process reads its script from the start: give it the second turn's reply.
    workspace_with(workspace, {"text": "second done"})
    second = Recorder()
    ctx, conn, proc, _ = await start(second)
    try:
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
        replayed = list(second.updates)
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("second prompt")])
    finally:
        await ctx.__aexit__(None, None, None)
    # The reasoning is the client's thought chunks, live and replayed, before the reply's text.
    assert "".join(u.content.text for u in first.of("agent_thought_chunk")) == "the echo worked, so I am done"
    kinds = [u.session_update for u in replayed]
    assert kinds[0] == "user_message_chunk" and replayed[0].content.text == "first prompt"
    thought = kinds.index("agent_thought_chunk")
    assert replayed[thought].content.text == "the echo worked, so I am done"
    assert "first done" in replayed[thought + 1].content.text
    assert "tool_call" in kinds and "tool_call_update" in kinds
    # The shell call is titled by its command, live and replayed (a client shows the title as the call's label).
    live, again = first.of("tool_call")[0], next(u for u in replayed if u.session_update == "tool_call")
    assert live.title == again.title == "`echo first-result`" and again.kind == "execute"
    assert any(u.session_update == "agent_message_chunk" and "first done" in u.content.text for u in replayed)
    assert result.stop_reason == "end_turn" and "second done" in second.text()
    # The same conversation went on (the model was sent the first turn too).
    assert result.field_meta["forge"]["conversationId"] == session.session_id


async def test_session_list_offers_the_workspaces_conversations_to_resume(workspace: Path) -> None:
    workspace_with(workspace, {"text": "first done"}, {"text": "second done"})
    client = Recorder()
    ctx, conn, proc, init = await start(client)
    try:
        assert init.agent_capabilities.session_capabilities.list is not None
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=first.session_id, prompt=[text_block("fix the parser\nplease")])
        await conn.new_session(cwd=str(workspace), mcp_servers=[])  # never prompted: nothing to resume
        listed = await conn.list_sessions(cwd=str(workspace))
        everywhere = await conn.list_sessions()
    finally:
        await ctx.__aexit__(None, None, None)
    (info,) = listed.sessions
    assert info.session_id == first.session_id and info.cwd == str(workspace.resolve())
    assert info.title == "fix the parser" and info.updated_at and listed.next_cursor is None
    assert [s.session_id for s in everywhere.sessions] == [first.session_id]


async def test_edits_go_through_the_client_when_it_offers_fs(workspace: Path) -> None:
    write = {"tool_calls": [{"name": "write", "arguments": {"file_path": "notes.md", "content": "hello\n"}}]}
    workspace_with(workspace, write, {"text": "wrote"})
    client = Recorder()
    ctx, conn, proc, _ = await start(client, fs=True)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write notes")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert client.writes == [(str(workspace.resolve() / "notes.md"), "hello\n")]
    assert not (workspace / "notes.md").exists()  # the editor's buffer has it; the disk is the editor's to save
    (call,) = client.of("tool_call")
    assert call.kind == "edit" and call.locations[0].path == str(workspace.resolve() / "notes.md")


async def test_a_write_the_client_refuses_is_a_failure_that_says_why(workspace: Path) -> None:
    """acpx without --approve-all answers fs/write_text_file with Internal error, data {details: "Permission
    denied ..."}: the tool's failure names the file and the client's reason, not "internal error in tool"."""
    from acp import RequestError

    class Refusing(Recorder):
        async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
            raise RequestError.internal_error({"details": "Permission denied for fs/write_text_file"})

    write = {"tool_calls": [{"name": "write", "arguments": {"file_path": "notes.md", "content": "hello\n"}}]}
    workspace_with(workspace, write, {"text": "could not"})
    client = Refusing()
    ctx, conn, proc, _ = await start(client, fs=True)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write notes")])
    finally:
        await ctx.__aexit__(None, None, None)
    (failed,) = [u for u in client.of("tool_call_update") if u.status == "failed"]
    said = " ".join(c.content.text for c in failed.content if getattr(c, "content", None) is not None)
    assert "the client did not write notes.md: Permission denied for fs/write_text_file" in said, said
    assert "internal error in tool" not in said, said
    assert not (workspace / "notes.md").exists()


async def test_an_untrusted_workspace_is_said_and_bad_sessions_are_errors(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n')
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        # Refused before the turn starts: the turn ends with the reason said (not a JSON-RPC error a client
        # may leave "in progress" forever, without showing why).
        refused = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert refused.stop_reason == "end_turn" and refused.field_meta["refused"]["kind"] == "NoModel"
        assert "is not trusted" in client.text() and "forge-lsp trust" in client.text()
        assert "no model is set" in client.text() and "ignored because the workspace is not trusted" in client.text()
        assert ":ForgeTrust" not in client.text() and "forge.model" not in client.text()  # no editor's words here
        with pytest.raises(Exception, match="no session"):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        with pytest.raises(Exception, match="absolute path"):
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        with pytest.raises(Exception, match="no conversation"):
            await conn.load_session(cwd=str(workspace), session_id="0" * 32, mcp_servers=[])
        # Still serving after every bad request.
        again = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert again.session_id != session.session_id
    finally:
        await ctx.__aexit__(None, None, None)
    assert proc.returncode in (None, 0)


async def test_todo_write_is_the_plan(workspace: Path) -> None:
    todos = [{"content": "read the code", "status": "completed"}, {"content": "fix the bug", "status": "in_progress"}]
    workspace_with(workspace, {"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}]}, {"text": "planned"})
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("plan it")])
    finally:
        await ctx.__aexit__(None, None, None)
    (plan,) = client.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [("read the code", "completed"), ("fix the bug", "in_progress")]
    assert client.of("tool_call")[0].kind == "think"


def read(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read", "arguments": {"file_path": path}}]}


async def test_reads_come_from_the_clients_buffers_when_it_offers_fs(workspace: Path) -> None:
    (workspace / "notes.md").write_text("saved on disk\n")
    (workspace / "other.md").write_text("only on disk\n")
    os.mkfifo(workspace / "pipe")
    workspace_with(workspace, read("notes.md"), read("other.md"), read("pipe"), {"text": "read"})
    notes = str(workspace.resolve() / "notes.md")
    client = Recorder(buffers={notes: "unsaved in the editor\n"})
    ctx, conn, proc, _ = await start(client, read=True)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("read them")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    done = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    outputs = [u.content[0].content.text for u in done[:3]]
    assert "unsaved in the editor" in outputs[0] and "saved on disk" not in outputs[0]
    # The client could not give other.md: the disk's text. A FIFO is never asked about (nor opened).
    assert "only on disk" in outputs[1] and done[1].status == "completed"
    assert done[2].status == "failed" and "FIFO" in outputs[2]
    assert client.reads == [notes, str(workspace.resolve() / "other.md")]


@pytest.mark.parametrize("missing", ["", None], ids=["answers-empty", "answers-not-found"])
async def test_a_missing_file_is_not_found_and_the_client_is_not_asked_about_it(workspace: Path, missing: str | None) -> None:
    write = {"tool_calls": [{"name": "write", "arguments": {"file_path": "new.md", "content": "fresh\n"}}]}
    workspace_with(workspace, read("missing.md"), write, read("new.md"), {"text": "done"})
    client = Recorder(missing=missing)
    ctx, conn, proc, _ = await start(client, fs=True, read=True)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("read, write, read")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    done = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    outputs = [u.content[0].content.text for u in done]
    assert len(done) == 3  # one final update per call
    # Not "an empty file": the same failure as on disk. And a file about to be created is not asked about.
    assert done[0].status == "failed" and "file not found: missing.md" in outputs[0]
    assert done[1].status == "completed" and done[2].status == "completed"
    new = str(workspace.resolve() / "new.md")
    assert client.writes == [(new, "fresh\n")]
    # The client's buffer of the file the agent wrote is asked about (the disk has no such file).
    assert "fresh" in outputs[2] and client.reads == [new]


async def test_allow_for_this_conversation_is_asked_once_per_session(workspace: Path) -> None:
    log = workspace / "deploys.log"
    workspace_with(
        workspace,
        shell(f"echo deploy a >> {log}"),
        shell(f"echo deploy a >> {log}"),
        {"text": "deployed twice"},
        shell(f"echo deploy a >> {log}"),
        {"text": "deployed again"},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    client = Recorder(answer="allow_always")
    ctx, conn, proc, _ = await start(client)
    try:
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=first.session_id, prompt=[text_block("deploy twice")])
        asked_in_first = len(client.permissions)
        second = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=second.session_id, prompt=[text_block("deploy again")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert log.read_text() == "deploy a\n" * 3
    # Once in the first conversation (the second run of the same command was allowed already); the
    # other conversation in the same workspace is asked again.
    assert asked_in_first == 1 and len(client.permissions) == 2


async def test_each_session_has_its_own_plan_and_load_restores_it(workspace: Path) -> None:
    # All done: a pending todo would make the turn remind the model of it (one more scripted reply).
    todos = [{"content": "read the code", "status": "completed"}, {"content": "fix the bug", "status": "completed"}]
    todo_read = {"tool_calls": [{"name": "todo_read", "arguments": {}}]}
    workspace_with(
        workspace,
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}]},
        {"text": "planned"},
        todo_read,
        {"text": "nothing planned here"},
    )
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=first.session_id, prompt=[text_block("plan it")])
        second = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=second.session_id, prompt=[text_block("what is planned?")])
    finally:
        await ctx.__aexit__(None, None, None)
    read_output = [u for u in client.of("tool_call_update") if u.status == "completed"][-1].content[0].content.text
    assert "(no todos)" in read_output
    # After a restart, session/load replays the plan, and the session's todo list is back for its tools.
    workspace_with(workspace, todo_read, {"text": "still planned"})
    again = Recorder()
    ctx, conn, proc, _ = await start(again)
    try:
        await conn.load_session(cwd=str(workspace), session_id=first.session_id, mcp_servers=[])
        (plan,) = again.of("plan")
        await conn.prompt(session_id=first.session_id, prompt=[text_block("what is planned?")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert [(e.content, e.status) for e in plan.entries] == [("read the code", "completed"), ("fix the bug", "completed")]
    read_output = [u for u in again.of("tool_call_update") if u.status == "completed"][-1].content[0].content.text
    assert "[completed] fix the bug" in read_output


def raw_agent(stdin: Any, stdout: Any) -> Any:
    import subprocess

    return subprocess.Popen([*forkserver.command(), "acp"], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=agent_env())


INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
BAD_LINES = [
    b"not json\n",
    b"[1, 2]\n",
    b"null\n",
    b'{"jsonrpc":"2.0","id":9,"method":5}\n',
    b'{"jsonrpc":"2.0","id":10,"method":"session/new","params":[1]}\n',
    b"\xff\xfe\n",
]


def test_malformed_messages_are_answered_and_the_agent_goes_on() -> None:
    import subprocess

    from forge_lsp.acp.transport import MAX_MESSAGE_BYTES

    proc = raw_agent(subprocess.PIPE, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    for line in BAD_LINES:
        proc.stdin.write(line)
    proc.stdin.write(b'{"x": "' + b"a" * (MAX_MESSAGE_BYTES + 10) + b'"}\n')  # too long: refused, never held whole
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    replies = []
    while not replies or replies[-1].get("id") != 1:
        replies.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    stderr = proc.stderr.read().decode()
    errors = [r["error"] for r in replies[:-1]]
    assert [e["code"] for e in errors] == [-32700, -32600, -32600, -32600, -32600, -32700, -32600]
    assert "batch requests are not supported" in errors[1]["message"] and "over" in errors[6]["message"]
    assert [r["id"] for r in replies[:-1]] == [None, None, None, 9, 10, None, None]
    assert replies[-1]["result"]["agentInfo"]["name"] == "forge-lsp"
    assert "Traceback" not in stderr


def test_stdin_and_stdout_may_be_files(tmp_path: Path) -> None:
    requests, replies = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    requests.write_bytes(b"not json\n" + INITIALIZE)
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        proc = raw_agent(stdin, stdout)
        assert proc.wait(timeout=30) == 0
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read().decode()
    lines = [json.loads(line) for line in replies.read_text().splitlines()]
    assert sorted(str(r.get("id")) for r in lines) == ["1", "None"]
    assert next(r for r in lines if r.get("id") == 1)["result"]["protocolVersion"] == 1


def test_a_client_that_stops_reading_a_full_pipe_does_not_leave_the_agent_hanging(tmp_path: Path) -> None:
    import subprocess

    requests, log = tmp_path / "requests.jsonl", tmp_path / "stderr.log"
    requests.write_bytes(b"not json\n" * 5000)  # ~700 kB of replies: far over what the pipe and the writer hold
    with requests.open("rb") as stdin, log.open("wb") as stderr:
        proc = subprocess.Popen(
            [*forkserver.command(), "acp"], stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, env=agent_env()
        )
    assert proc.stdout is not None
    try:
        seen, deadline = -1, time.monotonic() + 60
        while time.monotonic() < deadline:  # until the replies stop: the pipe is full, the writer paused
            time.sleep(1)
            now = log.read_bytes().count(b"refused a message")
            if now == seen and now > 0:  # (none yet: the agent is still starting, slow on a busy machine)
                break
            seen = now
        assert 0 < seen < 5000
        proc.stdout.close()  # the client goes away without reading
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()


async def test_a_prompt_sent_right_after_a_cancel_runs_once_the_cancelled_turn_ends(workspace: Path) -> None:
    # CodeCompanion sends the next prompt as soon as the user stops a turn, without waiting for the cancelled
    # prompt's response: it must run, not be refused as "a turn is already running".
    workspace_with(workspace, shell("sleep 30"), {"text": "Next answer."})
    client = Recorder()
    ctx, conn, proc, _ = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("wait")]))
        deadline = time.monotonic() + 30
        while not client.of("tool_call") and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        started = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        following = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("go on")]), 20)
        waited = time.monotonic() - started
        cancelled = await asyncio.wait_for(turn, 10)
    finally:
        await ctx.__aexit__(None, None, None)
    assert cancelled.stop_reason == "cancelled"
    assert waited < 8, waited  # it ran as soon as the cancelled turn ended, not after a timeout
    assert following.stop_reason == "end_turn" and not (following.field_meta or {}).get("refused"), following
    assert "Next answer." in client.text() and "not run" not in client.text()
