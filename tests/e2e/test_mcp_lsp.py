"""MCP over LSP: real servers no one here wrote (mcp-server-time, server-everything over stdio and streamable
HTTP) and the SDK-built flaky server, driven by the scripted model through forge.run."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from conftest import write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
from mcp_support import HttpEverything, everything_stdio, flaky, searched_path, time_server  # noqa: E402

pytestmark = pytest.mark.timeout(60)


async def command(client: LanguageClient, name: str, arg: Any = None) -> Any:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=[arg or {}]))


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def events(client: LanguageClient, kind: str) -> list[Any]:
    return [e for e in client.forge_events if e.type == kind]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def record_events(client: LanguageClient) -> None:
    client.forge_events = []  # type: ignore[attr-defined]

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        client.forge_events.append(params)  # type: ignore[attr-defined]


async def settings(client: LanguageClient, servers: dict[str, Any], **extra: Any) -> None:
    """The editor's settings (forge.mcpServers, as VS Code has them): changed, and pulled by the server again."""
    client.set_configuration({"maxRequestsPerTurn": 50, "mcpServers": servers, **extra}, section="forge")
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=None))
    for _ in range(100):
        status = await command(client, "forge.status")
        if {s["name"] for s in status["mcp"]} == set(servers):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the servers were not configured: {status['mcp']}")


async def test_a_real_servers_tool_is_listed_and_called(client: LanguageClient, ws: Path) -> None:
    await settings(client, {"time": time_server()})
    write_script(ws, call("mcp_time_get_current_time", timezone="UTC"), {"text": "It is late."})
    result = await command(client, "forge.run", {"prompt": "what time is it?"})
    assert result["status"] == "completed" and result["failures"] == 0
    (finished,) = events(client, "toolCallFinished")
    assert finished.tool == "mcp_time_get_current_time" and finished.ok and '"timezone": "UTC"' in finished.output
    status = await command(client, "forge.status")
    assert status["mcp"] == [{"name": "time", "state": "ready", "tools": 2, "source": "editor"}]
    listed = await command(client, "forge.mcpServers")
    (server,) = listed["servers"]
    assert [tool["name"] for tool in server["tools"]] == ["mcp_time_get_current_time", "mcp_time_convert_time"]


@pytest.mark.parametrize("transport", ["stdio", "streamableHttp", "sse"])
async def test_server_everything_over_stdio_streamable_http_and_sse(client: LanguageClient, ws: Path, transport: str) -> None:
    http = HttpEverything(transport) if transport != "stdio" else None
    try:
        entry = {"url": http.url} if http else everything_stdio()
        await settings(client, {"everything": entry})
        write_script(ws, call("mcp_everything_echo", message="hi there"), call("mcp_everything_get-tiny-image"), {"text": "ok"})
        result = await command(client, "forge.run", {"prompt": "echo"})
        assert result["status"] == "completed" and result["failures"] == 0, result
        echo, image = events(client, "toolCallFinished")
        assert echo.ok and "hi there" in echo.output
        assert image.ok and "[image: image/png" in image.output
    finally:
        if http:
            http.close()


async def test_is_error_counts_as_a_failure_until_the_interrupt(client: LanguageClient, ws: Path) -> None:
    await settings(client, {"flaky": flaky()})
    write_script(ws, *[call("mcp_flaky_fail", reason=f"try {n}") for n in range(3)], {"text": "never"})
    result = await command(client, "forge.run", {"prompt": "fail"})
    assert result["status"] == "interrupted"
    assert result["reason"]["kind"] == "MaxToolFailurePerTurnLimitReached" and result["reason"]["errors"] == {"mcp_flaky_fail": 3}
    assert [r.attemptsLeft for r in events(client, "retry")] == [2, 1, 0]
    assert all("refused on purpose" in f.output for f in events(client, "toolCallFinished"))


async def test_a_server_that_exits_mid_call_is_a_failure_and_the_turn_goes_on(client: LanguageClient, ws: Path) -> None:
    await settings(client, {"flaky": flaky()})
    write_script(ws, call("mcp_flaky_crash"), call("read", file_path="x.txt"), {"text": "carried on"})
    (ws / "x.txt").write_text("x\n")
    result = await command(client, "forge.run", {"prompt": "crash"})
    assert result["status"] == "completed" and result["text"] == "carried on" and result["failures"] == 1
    crashed, read = events(client, "toolCallFinished")
    assert not crashed.ok and "MCP server flaky" in crashed.output and read.ok
    (status,) = (await command(client, "forge.status"))["mcp"]
    assert status["state"] == "failed" and "during a call" in status["reason"]
    restarted = await command(client, "forge.restartMcpServer", {"name": "flaky"})
    assert restarted == {"name": "flaky", "state": "ready", "tools": 6, "source": "editor"}
    with pytest.raises(JsonRpcException, match="one of the MCP servers \\(flaky\\)"):
        await command(client, "forge.restartMcpServer", {"name": "nope"})


async def test_a_silent_server_is_reported_within_the_timeout_and_the_turn_runs(client: LanguageClient, ws: Path) -> None:
    # 8 s: the time server's own start takes seconds on a loaded machine (2 s failed it in CI).
    await settings(client, {"silent": flaky("silent"), "time": time_server()}, mcp={"startupTimeoutSecs": 8})
    write_script(ws, call("mcp_time_get_current_time", timezone="UTC"), {"text": "done anyway"})
    started = time.monotonic()
    result = await command(client, "forge.run", {"prompt": "go"})
    # The silent server never answers: the turn went on after its 8 s (without the timeout the turn would wait until
    # the test's).
    assert time.monotonic() - started < 30
    assert result["status"] == "completed" and result["failures"] == 0
    shown = [m.message for m in client.messages if "MCP server silent" in m.message]
    assert shown == [
        "Forge: MCP server silent failed: did not answer within 8 s ([mcp] startup_timeout_secs) (editor settings); its tools are not available"
    ]
    states = {s["name"]: s["state"] for s in (await command(client, "forge.status"))["mcp"]}
    assert states == {"silent": "failed", "time": "ready"}


@pytest.mark.untrusted
async def test_an_untrusted_mcp_json_starts_nothing(
    client: LanguageClient, ws: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    (ws / ".mcp.json").write_text(
        '{"mcpServers": {\n  "evil": {"command": "touch", "args": ["pwned"]},\n  "bad\\nname": {"command": "touch"}\n}}\n'
    )
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(changes=[t.FileEvent(uri=(ws / ".mcp.json").as_uri(), type=t.FileChangeType.Created)])
    )
    result = await command(client, "forge.run", {"prompt": "hi", "model": "scripted/echo"})
    assert result["status"] == "completed"
    # Listed where the user looks for it (:ForgeMcp, MCP Servers), never started; a restart says why not.
    untrusted = {
        "name": "evil",
        "state": "untrusted",
        "source": "workspace",
        "reason": "not started: the workspace is not trusted",
    }
    assert (await command(client, "forge.mcpServers")) == {"servers": [{**untrusted, "tools": []}]}
    assert (await command(client, "forge.status"))["mcp"] == [{**untrusted, "tools": 0}]
    with pytest.raises(JsonRpcException, match="MCP server evil: not started: the workspace is not trusted; trust it"):
        await command(client, "forge.restartMcpServer", {"name": "evil"})
    await asyncio.sleep(0.5)
    assert not (ws / "pwned").exists()
    diagnostics = client.diagnostics.get((ws / ".mcp.json").as_uri(), [])
    # (a name no server may have is not listed: a diagnostic on its entry only)
    assert [(d.range.start.line, d.code) for d in diagnostics] == [(1, "untrusted"), (2, "untrusted")]
    assert "mcpServers.evil" in diagnostics[0].message
    record_reliability(
        "attack: an untrusted workspace's .mcp.json starts a program",
        '.mcp.json {"evil": {"command": "touch", "args": ["pwned"]}}, a turn and forge.mcpServers in the editor',
        "nothing started, the file never appeared; a warning at the entry's line",
    )


async def test_list_changed_refreshes_the_tools_before_the_next_request(client: LanguageClient, ws: Path) -> None:
    await settings(client, {"flaky": flaky()})
    write_script(ws, call("mcp_flaky_grow"), call("mcp_flaky_grown"), {"text": "grew"})
    result = await command(client, "forge.run", {"prompt": "grow"})
    assert result["status"] == "completed" and result["failures"] == 0, result
    grow, grown = events(client, "toolCallFinished")
    assert grow.output == "added" and grown.ok and grown.output == "grown here"


async def test_max_failures_by_glob_and_the_tool_timeout(client: LanguageClient, ws: Path) -> None:
    await settings(client, {"flaky": flaky()}, toolTimeoutSecs=1, tools={"mcp_flaky_*": {"maxFailures": 1}})
    write_script(ws, call("mcp_flaky_slow", seconds=5), {"text": "never"})
    result = await command(client, "forge.run", {"prompt": "slow"})
    assert result["status"] == "interrupted" and result["reason"]["errors"] == {"mcp_flaky_slow": 1}
    assert any('mcp_flaky_slow 1 ([tools."mcp_flaky_*"] max_failures)' in m.message for m in client.log_messages)
    (finished,) = events(client, "toolCallFinished")
    assert "timed out after 1 s (tool_timeout_secs)" in finished.output
    (status,) = (await command(client, "forge.status"))["mcp"]
    assert status["state"] == "ready"  # a slow call is the call's failure, not the server's


async def test_a_trusted_mcp_json_failure_is_a_diagnostic_on_its_entry(client: LanguageClient, ws: Path) -> None:
    # The PATH searched is named: an editor's PATH is not the shell's (a command in an inactive venv is not on it).
    NOT_FOUND = f"cannot start no-such-mcp-server-xyz: not found on PATH ({searched_path()}); give its full path as command"  # noqa: N806
    mcp_json = ws / ".mcp.json"
    mcp_json.write_text('{\n  "mcpServers": {\n    "broken": {"command": "no-such-mcp-server-xyz"}\n  }\n}\n')
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(changes=[t.FileEvent(uri=mcp_json.as_uri(), type=t.FileChangeType.Created)])
    )
    listed = await command(client, "forge.mcpServers")
    assert listed == {
        "servers": [
            {"name": "broken", "state": "failed", "source": "workspace", "tools": [],
             "reason": NOT_FOUND}
        ]
    }  # fmt: skip
    for _ in range(100):
        diagnostics = client.diagnostics.get(mcp_json.as_uri(), [])
        if diagnostics:
            break
        await asyncio.sleep(0.05)
    assert [(d.range.start.line, d.code, d.message) for d in diagnostics] == [
        (2, "mcp-server-failed", f"MCP server broken failed: {NOT_FOUND}")
    ]
    shown = [m.message for m in client.messages if "MCP server broken" in m.message]
    assert shown == [f"Forge: MCP server broken failed: {NOT_FOUND} ({mcp_json}:3); its tools are not available"]


async def test_a_server_that_exits_while_idle_is_failed_at_once(client: LanguageClient, ws: Path) -> None:
    """A stdio server that exits on its own after listing its tools (no call in flight): failed with why at once
    (forge.status, shown once), not "ready" until the next call; its tools are absent from the next request."""
    await settings(client, {"idle": flaky("exit-after-list")})
    write_script(ws, {"text": "first"}, call("mcp_idle_ok"), {"text": "second"})
    first = await command(client, "forge.run", {"prompt": "start it"})
    assert first["status"] == "completed"
    deadline = time.monotonic() + 15
    while (status := (await command(client, "forge.status"))["mcp"])[0]["state"] != "failed":
        assert time.monotonic() < deadline, f"still {status} after the server exited"
        await asyncio.sleep(0.1)
    (idle,) = status
    assert idle["tools"] == 0 and "exited" in idle["reason"] and "leaving on purpose" in idle["reason"], idle
    shown = [m.message for m in client.messages if "MCP server idle" in m.message]
    assert len(shown) == 1 and "exited" in shown[0], shown
    listed = await command(client, "forge.mcpServers")
    assert listed["servers"][0]["tools"] == [] and listed["servers"][0]["state"] == "failed"
    second = await command(client, "forge.run", {"prompt": "use it"})
    assert second["status"] == "completed" and second["failures"] == 1
    (finished,) = events(client, "toolCallFinished")
    assert not finished.ok and "not running" not in finished.output, finished.output  # not offered: an unknown tool
    assert len([m for m in client.messages if "MCP server idle" in m.message]) == 1


async def test_settings_pushed_while_a_pull_is_answered_late_are_not_lost(client: LanguageClient, ws: Path) -> None:
    """A didChangeConfiguration push that arrives while a workspace/configuration pull waits for its answer: the
    pull's (older) answer must not overwrite the pushed settings (the MCP servers were lost)."""
    held = asyncio.Event()
    answered = asyncio.Event()
    pulls: list[Any] = []

    async def late_answer(params: t.ConfigurationParams) -> list[Any]:
        pulls.append(params)
        old = [client.get_configuration(section=item.section) for item in params.items]  # the settings as asked
        await held.wait()
        answered.set()
        return old

    await command(client, "forge.status")  # the first pull (initialized) is answered
    client.protocol.fm.features.pop(t.WORKSPACE_CONFIGURATION)
    client.feature(t.WORKSPACE_CONFIGURATION)(late_answer)
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=None))  # the server pulls
    for _ in range(100):
        if pulls:
            break
        await asyncio.sleep(0.05)
    assert pulls, "the server did not pull the settings"
    pushed = {"maxRequestsPerTurn": 50, "mcpServers": {"time": time_server()}}
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings={"forge": pushed}))
    for _ in range(100):
        if [s["name"] for s in (await command(client, "forge.status"))["mcp"]] == ["time"]:
            break
        await asyncio.sleep(0.05)
    held.set()  # now the pull's answer, without the servers, arrives
    await answered.wait()
    set_aside = False
    for _ in range(100):  # until the server set the late answer aside, or it took the servers away
        names = [s["name"] for s in (await command(client, "forge.status"))["mcp"]]
        set_aside = any("older than settings received since" in m.message for m in client.log_messages)
        if set_aside or names != ["time"]:
            break
        await asyncio.sleep(0.05)
    assert names == ["time"], "the pull's older answer overwrote the pushed settings"
    assert set_aside
