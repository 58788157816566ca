"""kill -9 mid-turn and resume; many turns and a 500-call turn with bounded memory, no leaks."""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from forge_lsp.state.liveness import start_time
from forge_lsp.state.store import INTERRUPTED_RESULT, StateStore

from support.openai_server import OpenAIStub
from support.rawlsp import RawClient

pytestmark = pytest.mark.timeout(240)
SERVER = [sys.executable, "-m", "forge_lsp"]
KEY = {"OPENAI_API_KEY": "sk-reliability-test-key-123456"}


def start(ws: Path, env: dict[str, str] | None = None) -> RawClient:
    client = RawClient(SERVER, settings={}, env={**KEY, **(env or {})})
    client.initialize(ws)
    client.notify("initialized", {})
    return client


def alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def recorded_process(db_path: Path, words: str) -> tuple[int, str]:
    """(pid, kernel start time) of the command line the server recorded as running (its processes table):
    waits for the row, the server's own sign that the command started (the test's timeout bounds it)."""
    while True:
        if db_path.exists():
            db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
            try:
                rows = db.execute("SELECT pid, started, cmdline FROM processes").fetchall()
            except sqlite3.OperationalError:  # the table is being created
                rows = []
            finally:
                db.close()
            for pid, started, argv in rows:
                if words in " ".join(json.loads(argv)):  # bash -c "sleep 600", or the sleep it became
                    return int(pid), str(started)
        time.sleep(0.02)


def wait_gone(pid: int, started: str) -> None:
    """Until that process (pid and start time: not another one that got its pid) has exited: its pidfd turns
    readable when it does. No clock: under load a kill may take long to land; the test's timeout bounds it."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if start_time(pid) == started:
            select.select([fd], [], [])
    finally:
        os.close(fd)


def test_kill_9_mid_turn_then_a_new_server_resumes_everything(workspace: Path) -> None:
    behaviours = [
        {"tool": "shell", "arguments": json.dumps({"command": "echo first-result"})},
        # Longer than the test's timeout: only the kill ends it while the test waits.
        {"tool": "shell", "arguments": json.dumps({"command": "sleep 600"})},
        {"text": "resumed fine"},
    ]
    with OpenAIStub(behaviours) as stub:
        (workspace / ".forge.toml").write_text(f'model = "openai/gpt-stub"\napi_base = "{stub.url}"\n')
        client = start(workspace)
        client.send_request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "first"}]})
        client.read_until(lambda m: m.get("method") == "forge/event" and m["params"].get("title") == "shell: sleep 600")
        # Killed once the command runs and is recorded (not after a guessed delay: under load it may take seconds).
        orphan, started = recorded_process(workspace / ".forge" / "state.sqlite3", "sleep 600")
        client.proc.send_signal(signal.SIGKILL)
        client.proc.wait()
        turn_id = client.events[0]["turnId"]
        assert alive(orphan) and start_time(orphan) == started  # the shell command outlived its server
        transcript = (workspace / ".forge" / "transcripts" / f"{turn_id}.md").read_text()
        assert transcript.endswith("\n") and "first-result" in transcript  # whole entries only

        second = start(workspace)
        result = second.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "again"}]})
        status = second.request("workspace/executeCommand", {"command": "forge.status", "arguments": [{}]})
        second.close()
    # The new server killed what the dead one left running when it opened the state: the signal is sent
    # then, the process goes when the kernel gets to it (seconds under load). Waited for before this test
    # opens the state itself, which would kill it too.
    wait_gone(orphan, started)
    assert result["status"] == "completed" and result["text"] == "resumed fine"
    assert status["running"] is False
    sent = stub.requests[2]["body"]["messages"]
    roles = [(m["role"], (m.get("content") or "")[:40]) for m in sent if m["role"] != "system"]
    # The first message carries the workspace's context (system information) before the user's words.
    assert roles[0][0] == "user" and sent[1]["content"].endswith("\n\nfirst")
    assert roles[1][0] == "assistant" and roles[2][0] == "tool" and "first-result" in sent[3]["content"]
    assert roles[3][0] == "assistant"
    assert roles[4] == ("tool", INTERRUPTED_RESULT[:40])
    assert roles[5] == ("user", "again")
    store = StateStore(workspace)
    assert store.turn_status(turn_id) == "failed"
    store.close()


def test_two_workspaces_never_see_each_others_state(tmp_path: Path) -> None:
    roots = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / ".forge.toml").write_text('model = "scripted/echo"\n')
        roots.append(root)
    results = []
    for root in roots:
        client = start(root)
        results.append(
            client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": f"in {root.name}"}]})
        )
        client.close()
    a, b = (StateStore(r) for r in roots)
    assert results[0]["conversationId"] != results[1]["conversationId"]
    assert [m.content for m in a.history(results[0]["conversationId"]) if m.role == "user"] == ["in a"]
    assert [m.content for m in b.history(results[1]["conversationId"]) if m.role == "user"] == ["in b"]


def test_twenty_turns_and_a_500_call_turn_bounded_memory_no_leaks(workspace: Path, record_reliability) -> None:  # type: ignore[no-untyped-def]
    calls = [
        {
            "tool_calls": [
                {
                    "name": "shell" if i % 10 == 0 else "todo_write",
                    "arguments": {"command": f"echo {i}"}
                    if i % 10 == 0
                    else {"todos": [{"content": f"t{i}", "status": "completed"}]},
                }
            ]
        }
        for i in range(500)
    ]
    responses = [{"text": f"turn {i}"} for i in range(20)] + calls + [{"text": "big turn done"}]
    (workspace / "script.json").write_text(json.dumps({"responses": responses}))
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\nmax_requests_per_turn = 1000\n')
    client = start(workspace)
    pid = client.proc.pid

    def fds() -> int:
        return len(os.listdir(f"/proc/{pid}/fd"))

    warm = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "warm"}]})
    assert warm["status"] == "completed", warm  # a failed first turn would shift every later reply by one
    fds_before = fds()
    for i in range(19):
        r = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": f"turn {i}"}]})
        assert r["status"] == "completed"
    rss_after_20 = _status(pid, "VmRSS")
    big = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "big"}]})
    assert big["status"] == "completed" and big["toolCalls"] == 500 and big["failures"] == 0
    peak = _status(pid, "VmHWM")
    rss_end = _status(pid, "VmRSS")
    fds_after = fds()
    leaked = children(pid)
    client.close()
    record_reliability(
        "load: 20 turns back to back + one turn of 500 tool calls",
        "21 turns, 520 requests, 500 tool calls (50 shell)",
        f"peak RSS {peak:.0f} MB, fds {fds_before}->{fds_after}, child processes left {len(leaked)}",
    )
    assert peak < 600, f"peak RSS {peak} MB"
    assert rss_end - rss_after_20 < 150, (rss_after_20, rss_end)
    assert fds_after <= fds_before + 4, (fds_before, fds_after)
    assert leaked == []


def _status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(key)
