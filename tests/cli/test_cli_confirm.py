"""forge-lsp run and a [tools.shell] confirm rule: in a terminal the user is asked (y / N / a = always, for the rest
of the run: the run's conversation); without one (stdin or stderr not a terminal) the command is not run, as nobody can be asked."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

from support import forkserver
from support.trust import trust_workspace

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ECHO = {"tool_calls": [{"name": "shell", "arguments": {"command": "echo deployed"}}]}


def confirm_workspace(root: Path, *responses: object) -> None:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/script.json"\n[tools.shell]\nconfirm = ["echo *"]\n')
    trust_workspace(root)


def read_until(fd: int, wanted: bytes, seen: bytearray, times: int = 1, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while seen.count(wanted) < times:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        try:
            chunk = os.read(fd, 4096) if ready else b""
        except OSError:  # the process ended: the terminal is closed
            chunk = b""
        assert chunk, f"waited for {wanted!r}; the terminal showed: {seen.decode(errors='replace')}"
        seen += chunk


def run_in_terminal(root: Path, answers: list[bytes]) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """forge-lsp run with stdin and stderr on a terminal (a pty), stdout piped; each question answered in turn."""
    import pty

    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*forkserver.command(), "run", "deploy", "-w", str(root)],
        stdin=terminal,
        stderr=terminal,
        stdout=subprocess.PIPE,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    os.close(terminal)
    seen = bytearray()
    try:
        for n, answer in enumerate(answers, 1):
            read_until(controller, b"[y/N/a]", seen, n)
            assert seen.count(b"[y/N/a]") == n, seen.decode(errors="replace")
            os.write(controller, answer)
        out, _ = proc.communicate(timeout=60)
        # what is left on the terminal once it ended
        while select.select([controller], [], [], 0.2)[0]:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode or 0, out, b""), seen.decode(errors="replace")


def test_in_a_terminal_yes_runs_the_command(workspace: Path) -> None:
    confirm_workspace(workspace, ECHO, {"text": "done"})
    p, terminal = run_in_terminal(workspace, [b"y\n"])
    assert p.returncode == 0, terminal
    assert "Allow the agent to run `echo deployed`?" in terminal and "confirm pattern 'echo *'" in terminal
    assert b"deployed" in p.stdout and b"nobody can be asked" not in p.stdout, p.stdout


def test_in_a_terminal_no_or_enter_denies_it(workspace: Path) -> None:
    confirm_workspace(workspace, ECHO, ECHO, {"text": "done"})
    p, terminal = run_in_terminal(workspace, [b"n\n", b"\n"])
    assert p.stdout.count(b"the user denied running this command") == 2, p.stdout
    assert b"<stdout>deployed" not in p.stdout


def test_always_is_asked_once_for_this_conversation(workspace: Path) -> None:
    confirm_workspace(workspace, ECHO, ECHO, {"text": "done"})
    p, terminal = run_in_terminal(workspace, [b"a\n"])
    assert p.returncode == 0, terminal
    assert terminal.count("[y/N/a]") == 1, terminal
    assert b"denied" not in p.stdout and b"nobody can be asked" not in p.stdout, p.stdout


def test_without_a_terminal_it_is_not_run_and_says_so(workspace: Path) -> None:
    confirm_workspace(workspace, ECHO, {"text": "ok"})
    p = subprocess.run(
        [*forkserver.command(), "run", "deploy", "-w", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr
    assert "nobody can be asked here" in p.stdout and "[y/N/a]" not in p.stderr
