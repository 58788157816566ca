"""forge-lsp undo [--turn ID]: a turn's file changes put back from the command line, or refused naming the file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support import forkserver


def forge(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*forkserver.command(), *args], capture_output=True, text=True, timeout=90, env=env)


def a_turn(workspace: Path, *calls: dict[str, object]) -> str:
    """Run a scripted turn making these tool calls; its turn id."""
    responses = [{"tool_calls": [c]} for c in calls] + [{"text": "done"}]
    (workspace / "s.json").write_text(json.dumps({"responses": responses}))
    p = forge("run", "edit", "-w", str(workspace), "-m", "scripted/s.json", "--trust")
    assert p.returncode == 0, p.stderr
    listed = json.loads(forge("conversations", "-w", str(workspace), "--json").stdout)
    return str(listed[0]["turnFiles"][-1]["turnId"])


def test_undo_puts_back_the_last_turn_and_says_so_the_second_time(workspace: Path) -> None:
    (workspace / "app.py").write_text("a = 1\n")
    turn = a_turn(
        workspace,
        {"name": "patch", "arguments": {"file_path": "app.py", "old_string": "a = 1", "new_string": "a = 2"}},
        {"name": "write", "arguments": {"file_path": "new.py", "content": "b = 0\n"}},
    )
    assert (workspace / "app.py").read_text() == "a = 2\n" and (workspace / "new.py").exists()
    p = forge("undo", "-w", str(workspace))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "  restored app.py",
        "  removed new.py (the turn created it)",
        f"undid turn {turn}: 2 files put back as before the turn",
    ]
    assert (workspace / "app.py").read_text() == "a = 1\n" and not (workspace / "new.py").exists()
    again = forge("undo", "--turn", turn, "-w", str(workspace))
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.startswith(f"forge-lsp: turn {turn} was already undone (") and len(again.stderr.splitlines()) == 1


def test_undo_refuses_naming_the_file_the_user_changed_and_restores_nothing(workspace: Path) -> None:
    (workspace / "app.py").write_text("a = 1\n")
    (workspace / "lib.py").write_text("c = 1\n")
    turn = a_turn(
        workspace,
        {"name": "patch", "arguments": {"file_path": "app.py", "old_string": "a = 1", "new_string": "a = 2"}},
        {"name": "patch", "arguments": {"file_path": "lib.py", "old_string": "c = 1", "new_string": "c = 2"}},
    )
    (workspace / "lib.py").write_text("c = 2\nmine = True\n")
    p = forge("undo", "--turn", turn, "-w", str(workspace))
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == (
        f"forge-lsp: lib.py changed since the turn: cannot undo; nothing was restored, and your changes are kept (turn {turn})"
    )
    assert (workspace / "app.py").read_text() == "a = 2\n" and (workspace / "lib.py").read_text() == "c = 2\nmine = True\n"


def test_undo_with_nothing_to_undo_or_an_unknown_turn_is_one_line(workspace: Path) -> None:
    p = forge("undo", "-w", str(workspace))
    assert p.returncode == 1 and "nothing to undo" in p.stderr and len(p.stderr.splitlines()) == 1
    assert not (workspace / ".forge").exists()  # asking made no state
    (workspace / "app.py").write_text("a = 1\n")
    a_turn(workspace, {"name": "write", "arguments": {"file_path": "app.py", "content": "x\n", "overwrite": True}})
    p = forge("undo", "--turn", "nope", "-w", str(workspace))
    assert p.returncode == 1 and p.stderr.startswith("forge-lsp: no turn 'nope' in ") and "Traceback" not in p.stderr
    p = forge("undo", "--turn", "", "-w", str(workspace))
    assert p.returncode == 1 and "--turn is empty" in p.stderr
