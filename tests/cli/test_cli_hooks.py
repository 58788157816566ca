"""The user's hooks through `forge-lsp run` (issue 37): a real process, a user config.toml with [[hooks]]."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from test_cli import forge, write_script

from support import forkserver
from support.hooks import GUARD, call
from support.processes import ctrl_c_as_in_a_terminal, left_running_in, processes_in

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "guard.py").write_text(GUARD)
    return folder / "config.toml"


def run(workspace: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return forge("run", "go", "-w", str(workspace), *extra, env={"FORGE_LSP_CONFIG": str(config)})


def test_each_hook_event_and_exit_code_in_a_run(workspace: Path, user_config: Path) -> None:
    user_config.write_text(
        f'[[hooks]]\nevent = "pre_tool"\nmatcher = "write|patch"\ncommand = "{sys.executable} {user_config.parent / "guard.py"}"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "shell"\ncommand = "echo \'lint: 2 problems\' >&2; exit 2"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "read"\ncommand = "echo checked by the read hook"\n\n'
        f'[[hooks]]\nevent = "pre_tool"\nmatcher = "read"\ncommand = "cat > {user_config.parent / "read.json"}"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "todo_*"\ncommand = "echo broken >&2; exit 3"\n\n'
        '[[hooks]]\nevent = "stop"\ncommand = "test -e stopped && exit 0; touch stopped; echo \'run the tests first\' >&2; exit 2"\n'
    )
    (workspace / "a.txt").write_text("hello\n")
    write_script(
        workspace,
        call("write", file_path="app/.env", content="KEY=1\n"),
        call("shell", command="echo made > made.txt"),
        call("read", file_path="a.txt"),
        call("todo_read"),
        {"text": "Done."},
        {"text": "Tests pass now."},
    )
    p = run(workspace, user_config)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "  ✗ write failed: Blocked: app/.env holds secrets; write app/.env.example instead" in lines
    assert "  ✗ shell failed: lint: 2 problems" in lines and "  ✓ read ok" in lines
    assert not (workspace / "app" / ".env").exists() and (workspace / "made.txt").exists()
    (error,) = [line for line in lines if line.startswith("  ⚠ hook:")]
    assert error.startswith(f"  ⚠ hook: the post_tool hook `echo broken >&2; exit 3` ({user_config}:21) for the todo_read call")
    assert "exited 3 (broken)" in error
    (stop,) = [line for line in lines if "reminder to the model (stop hook)" in line]
    assert "did not let the turn end: run the tests first" in stop
    assert lines.index(stop) < lines.index("  assistant: Tests pass now.")
    assert "2 failures" in lines[-1] and "6 requests" in lines[-1]
    (transcript_file,) = (workspace / ".forge" / "transcripts").glob("*.md")
    transcript = transcript_file.read_text()
    read = json.loads((user_config.parent / "read.json").read_text())
    assert (read["hook_event_name"], read["tool_name"], read["tool_input"]) == ("PreToolUse", "read", {"file_path": "a.txt"})
    assert read["transcript_path"] == str(transcript_file) and read["cwd"] == str(workspace)
    assert "post_tool hook `echo checked by the read hook`: checked by the read hook" in transcript
    assert "\n> Hook error: the post_tool hook `echo broken >&2; exit 3` (" in transcript
    assert "## Reminder to the model (stop hook)\n\nThe stop hook `test -e stopped" in transcript


def test_a_stop_hook_that_always_exits_2_is_bounded_by_max_stop_blocks(workspace: Path, user_config: Path) -> None:
    user_config.write_text('[[hooks]]\nevent = "stop"\ncommand = "echo never satisfied >&2; exit 2"\n')
    write_script(workspace, *[{"text": f"answer {n}"} for n in range(1, 10)])
    p = run(workspace, user_config)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("did not let the turn end: never satisfied") == 3  # the default max_stop_blocks
    assert "max_stop_blocks (3) this turn: the turn ends" in p.stdout
    assert "answer 4" in p.stdout and "answer 5" not in p.stdout and "4 requests" in p.stdout


def test_an_untrusted_workspaces_hooks_never_run_and_are_said(workspace: Path, user_config: Path) -> None:
    user_config.write_text('model = "scripted/script.json"\n\n[[hooks]]\nevent = "post_tool"\ncommand = "touch mine"\n')
    (workspace / "script.json").write_text(json.dumps({"responses": [call("shell", command="true"), {"text": "ok"}]}))
    (workspace / ".forge.toml").write_text(
        '[[hooks]]\nevent = "pre_tool"\ncommand = "touch pwned"\n\n[[hooks]]\nevent = "stop"\ncommand = "touch pwned"\n'
    )
    p = run(workspace, user_config)
    assert p.returncode == 0, p.stderr
    assert not (workspace / "pwned").exists() and (workspace / "mine").exists()
    assert "is not trusted, so it cannot set: .forge.toml:1 hooks (a hook is a program" in p.stderr
    assert ".forge.toml:5 hooks (" in p.stderr and "this stop hook does not run" in p.stderr
    p = run(workspace, user_config, "--trust")  # the user says so for this run
    assert p.returncode == 0, p.stderr
    assert (workspace / "pwned").exists()


def test_ctrl_c_kills_a_sleeping_hook(workspace: Path, user_config: Path, record_reliability: Any) -> None:
    marker = workspace / "hook-started"
    user_config.write_text(f'[[hooks]]\nevent = "pre_tool"\ncommand = "sleep 300 & touch {marker}; wait"\n')
    write_script(workspace, call("shell", command="touch ran"), {"text": "never"})
    proc = subprocess.Popen(
        [*forkserver.command(), "run", "go", "-w", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "FORGE_LSP_CONFIG": str(user_config)},
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the hook never started"
            time.sleep(0.05)
        assert any("sleep 300" in p for p in processes_in(workspace))
        proc.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert not (workspace / "ran").exists()
    assert left_running_in(workspace) == []
    record_reliability(
        "a pre_tool hook sleeping, with a background child, when the turn is cancelled",
        "Ctrl-C (SIGINT) on forge-lsp run",
        "the hook's process group killed: no process left in the workspace; exit 130, the call not run",
    )


def test_the_transcript_path_a_hook_reads_is_where_the_transcript_is(workspace: Path, user_config: Path, tmp_path: Path) -> None:
    # A workspace's .forge/transcripts that is a link elsewhere is never written through: the transcript goes to the
    # user's state folder, and a hook reading transcript_path must find it there.
    dump = user_config.parent / "stop.json"
    user_config.write_text(f'[[hooks]]\nevent = "stop"\ncommand = "cat > {dump}"\n')
    write_script(workspace, {"text": "hi"})
    (tmp_path / "elsewhere").mkdir()
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "transcripts").symlink_to(tmp_path / "elsewhere")
    p = run(workspace, user_config)
    assert p.returncode == 0, p.stderr
    path = Path(json.loads(dump.read_text())["transcript_path"])
    assert path.is_file() and "## Prompt" in path.read_text()
    assert list((tmp_path / "elsewhere").iterdir()) == []
