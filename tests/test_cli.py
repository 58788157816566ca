"""forge-lsp run / demo as a user runs them: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def forge(*args: str, cwd: Path | None = None, timeout: int = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forge_lsp", *args], capture_output=True, text=True, timeout=timeout, env=ENV, cwd=cwd
    )


def write_script(root: Path, *responses: object) -> None:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n')


def test_run_completed_exits_0(workspace: Path) -> None:
    write_script(
        workspace,
        {"tool_calls": [{"name": "write", "arguments": {"file_path": "hi.txt", "content": "hi\n"}}]},
        {"text": "Wrote it."},
    )
    p = forge("run", "write hi.txt", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    assert "→ write: hi.txt" in p.stdout and "■ turn completed" in p.stdout and "Wrote it." in p.stdout
    assert (workspace / "hi.txt").read_text() == "hi\n"


def test_run_interrupted_exits_3(workspace: Path) -> None:
    fail = {"tool_calls": [{"name": "shell", "arguments": {"command": "false"}}]}
    write_script(workspace, fail, fail, fail)
    p = forge("run", "fail", "-w", str(workspace))
    assert p.returncode == 3, p.stderr
    assert "Attempts remaining:** 2" in p.stdout and "Attempts remaining:** 1" in p.stdout
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {'shell': 3}}" in p.stdout
    (transcript,) = (workspace / ".forge" / "transcripts").glob("*.md")
    assert "## Interrupted: MaxToolFailurePerTurnLimitReached" in transcript.read_text()


def test_run_failed_exits_1(workspace: Path) -> None:
    write_script(workspace, {"error": {"status": 401, "message": "bad key"}})
    p = forge("run", "x", "-w", str(workspace))
    assert p.returncode == 1
    assert "bad key" in p.stdout


def test_run_model_flag_overrides_config(workspace: Path) -> None:
    p = forge("run", "hello", "-w", str(workspace), "--model", "scripted/echo")
    assert p.returncode == 0 and "Hello from the scripted model." in p.stdout


@pytest.mark.parametrize("mode", [["--in-process"], []])
def test_demo_shows_retries_recovery_and_interrupt(tmp_path: Path, mode: list[str]) -> None:
    p = forge("demo", "--workspace", str(tmp_path), *mode, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    notices = [line.strip() for line in out.splitlines() if "Attempts remaining" in line]
    assert notices[:2] == ["- **Attempts remaining:** 2", "- **Attempts remaining:** 1"]
    assert "model request failed (HTTP 429" in out
    assert out.index("✓ shell ok") > out.index("- **Attempts remaining:** 1")  # the recovery
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {'patch': 3}}" in out
    assert "■ turn interrupted" in out


def test_run_without_any_model_fails_at_once_saying_where_to_set_one(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("max_tool_failure_per_turn = 2\n")
    p = forge("run", "hello", "-w", str(workspace))
    assert p.returncode == 2, p.stderr
    assert "no model is set" in p.stderr and ".forge.toml" in p.stderr
    assert "config.toml" in p.stderr and "forge.model" in p.stderr and "--model" in p.stderr
    assert "Traceback" not in p.stderr and not (workspace / ".forge" / "transcripts").exists()
