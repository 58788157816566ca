"""The suite's fork server (support/forkserver.py) stands in for `python -m forge_lsp` exactly where a test sees it:
stdin, stdout and stderr, arguments, environment, working directory, exit code, signals, and a killed process."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import forkserver

pytestmark = pytest.mark.timeout(60)


def forked(*args: str) -> list[str]:
    """The fork server's command, once its socket is there (before, the shim runs the real command)."""
    command = forkserver.command(*args)
    end = time.monotonic() + 30
    while not os.path.exists(command[4]) and time.monotonic() < end:
        time.sleep(0.05)
    assert os.path.exists(command[4]), "the fork server did not start"
    return command


def test_a_forked_run_is_the_real_commands_run(tmp_path: Path) -> None:
    """The same output, errors and exit codes as `python -m forge_lsp`, each in a workspace of its own."""
    env = {**os.environ, "FORGE_TEST_MARK": "1"}
    cases = (["run", "hello", "-w", ".", "--model", "scripted/echo", "--trust"], ["--bogus"], ["run", "x", "-w", "missing"])
    for case, args in enumerate(cases):
        answers = []
        for name, command in (("real", [sys.executable, "-m", "forge_lsp", *args]), ("fork", forked(*args))):
            workspace = tmp_path / f"{name}-{case}"
            workspace.mkdir()
            done = subprocess.run(command, capture_output=True, text=True, cwd=workspace, env=env)
            answers.append((done.returncode, ids(done.stdout), done.stderr))
        assert answers[0] == answers[1], args


def ids(text: str) -> str:
    """The output with its turn ids (the time and a random part) as one word."""
    return re.sub(r"\b\d{8}-\d{6}-[0-9a-f]{8}\b", "TURN", text)


def test_the_server_reads_the_callers_stdin_in_the_callers_folder(tmp_path: Path) -> None:
    """`forge-lsp run -` reads its prompt from the test's stdin, in the test's folder."""
    proc = subprocess.run(
        forked("run", "-", "-w", ".", "--model", "scripted/echo", "--trust"),
        input="a prompt on stdin",
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "a prompt on stdin" in proc.stdout
    assert (tmp_path / ".forge").is_dir()  # its state, in the folder it ran in


def test_a_signal_reaches_the_server_and_its_end_is_the_shims(tmp_path: Path) -> None:
    """SIGTERM to the process the test started ends the server, and the test sees it end by SIGTERM."""
    proc = subprocess.Popen(forked(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    time.sleep(0.5)
    server = _forked_child(proc.pid)
    assert server is not None
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == -signal.SIGTERM
    assert _gone(server)


def test_kill_9_of_the_shim_ends_the_server(tmp_path: Path) -> None:
    proc = subprocess.Popen(forked(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    time.sleep(0.5)
    server = _forked_child(proc.pid)
    assert server is not None
    proc.kill()
    proc.wait(10)
    assert _gone(server)


def test_without_a_fork_server_the_shim_runs_the_real_command(tmp_path: Path) -> None:
    command = forkserver.command("--version")
    command[4] = str(tmp_path / "no-socket")
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("forge-lsp "), proc.stderr


def _forked_child(shim: int) -> int | None:
    """The server the fork server forked for this shim: the newest child of this process's fork server."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        zygotes = [pid for pid, parent in _processes() if parent == os.getpid() and "forkserver" in _cmdline(pid)]
        servers = sorted(pid for pid, parent in _processes() if parent in zygotes)
        if servers:
            return servers[-1]
        time.sleep(0.05)
    return None


def _processes() -> list[tuple[int, int]]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                found.append((int(proc.name), int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])))
            except OSError:
                continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _gone(pid: int) -> bool:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            if (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False
