"""A secret the model echoes never reaches anything written: transcript, state DB, logMessage,
forge/event, diagnostics, the forge.run result, the CLI's output (issue 9 item 5)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from conftest import ENV, shell, write_script
from support import forkserver

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe_-DcBa9876"
PASSWORD = "Pw-" + "n0t-f0r-y0ur-eyes"
DB_URL = f"postgres://app:{PASSWORD}@db.internal:5432/prod"
GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
AWS = "AKIA" + "Z7EXAMPLEKEY0042"
SECRETS = [ANTHROPIC, PASSWORD, GITHUB, AWS]


def script(root: Path) -> None:
    write_script(
        root,
        {"text": f"Your key is {ANTHROPIC} and the database is {DB_URL}.", **shell(f"echo {GITHUB}; exit 1")},
        {"text": f"Done. Again: {ANTHROPIC}, {DB_URL}, and {GITHUB}."},
    )


def written(root: Path) -> dict[str, bytes]:
    """Every file the turn wrote: the workspace's .forge/ and the user's state folder (DB, WAL, transcripts)."""
    folders = [root / ".forge", Path(os.environ["XDG_STATE_HOME"])]
    return {str(p): p.read_bytes() for folder in folders for p in folder.rglob("*") if p.is_file()}


def assert_clean(where: str, data: bytes | str) -> None:
    blob = data.encode() if isinstance(data, str) else data
    for secret in SECRETS:
        assert secret.encode() not in blob, f"{secret[:8]}... in {where}"


@pytest.fixture(autouse=True)
def record_events(client: LanguageClient) -> None:
    client.forge_events = []  # type: ignore[attr-defined]

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        client.forge_events.append(params)  # type: ignore[attr-defined]


async def test_echoed_secrets_are_redacted_in_everything_the_server_writes(
    client: LanguageClient, ws: Path, record_reliability: Record
) -> None:
    script(ws)
    result = await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": f"my aws key is {AWS}, check it"}])
    )
    assert result["status"] == "completed", result
    assert "[REDACTED]" in result["text"] and "postgres://app:[REDACTED]@db.internal" in result["text"]
    assert_clean("the forge.run result", json.dumps(result))
    events = client.forge_events  # type: ignore[attr-defined]
    assert any(e.type == "toolCallFinished" for e in events)
    assert_clean("forge/event", repr(events))
    texts = "".join(e.text for e in events if e.type == "assistantText")
    assert "Your key is [REDACTED]" in texts
    logs = "\n".join(m.message for m in client.log_messages)
    assert "assistant: Your key is [REDACTED]" in logs
    assert_clean("window/logMessage", logs)
    assert_clean("diagnostics", repr(client.diagnostics))
    assert_clean("window/showMessage", repr(client.messages))
    files = written(ws)
    assert any(name.endswith(".md") for name in files) and any("state.sqlite3" in name for name in files)
    for name, data in files.items():
        assert_clean(name, data)
    record_reliability(
        "attack: model echoes secrets",
        "scripted reply with an sk-ant- key, a postgres URL with a password, a ghp_ token from a shell; an AKIA key in the prompt",
        "redacted in result, forge/event, logMessage, diagnostics, transcript, state DB",
    )


def test_echoed_secrets_are_redacted_on_the_cli(workspace: Path) -> None:
    script(workspace)
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n')
    p = subprocess.run(
        [*forkserver.command(), "run", f"my aws key is {AWS}", "-w", str(workspace), "--trust"],
        capture_output=True,
        text=True,
        timeout=90,
        env=ENV,
    )
    assert p.returncode == 0, p.stderr
    assert "Done. Again: [REDACTED], postgres://app:[REDACTED]@db.internal:5432/prod" in p.stdout
    assert_clean("stdout", p.stdout)
    assert_clean("stderr", p.stderr)
    for name, data in written(workspace).items():
        assert_clean(name, data)


@pytest.mark.settings({"settings": {"tools": {"shell": {"confirm": ["curl *"]}}}})
async def test_a_secret_in_a_command_line_reaches_no_progress_report_or_question(client: LanguageClient, ws: Path) -> None:
    # The prompt (the progress title), the command (progress "shell: ...") and the confirm question all
    # carry a key: the editor is sent none of them raw (issue 22 item 12).
    write_script(ws, shell(f"curl -H 'Authorization: token {GITHUB}' https://api.github.invalid"), {"text": "asked"})
    client.answers.answer = "Deny"  # type: ignore[attr-defined]
    result = await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": f"use my token {GITHUB} to call the API"}])
    )
    assert result["status"] == "completed", result
    (question,) = client.answers.requests  # type: ignore[attr-defined]
    assert "curl -H" in question.message and "[REDACTED]" in question.message
    assert_clean("the Allow/Deny question", question.message)
    progress = repr(client.progress_reports)
    assert "shell: curl" in progress and "use my token [REDACTED]" in progress
    assert_clean("$/progress", progress)


@pytest.mark.timeout(90)
async def test_a_file_made_to_slow_the_redactor_does_not_stall_the_server(
    client: LanguageClient, ws: Path, record_reliability: Record
) -> None:
    # Every text passes through the redactor; a file of names that never reach "=" made it quadratic: six lines
    # of "_KEY" x 250, read by the agent, held forge.status unanswered for 20 s (88 s for one such line alone).
    (ws / "keys.txt").write_text(("x=1\n" + "_KEY" * 250 + "\n") * 6)
    write_script(ws, {"tool_calls": [{"name": "read", "arguments": {"file_path": "keys.txt"}}]}, {"text": "read it"})
    run = asyncio.ensure_future(
        client.workspace_execute_command_async(t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": "read"}]))
    )
    result = await asyncio.wait_for(run, 45)
    assert result["status"] == "completed", result
    status = await asyncio.wait_for(
        client.workspace_execute_command_async(t.ExecuteCommandParams(command="forge.status", arguments=[{}])), 5
    )
    assert status["running"] is False
    record_reliability(
        "attack: a workspace file made to slow the redactor",
        'six lines of "_KEY" x 250 read by the agent (every tool output, event and log line is redacted)',
        "the turn and forge.status answer at once: redaction is linear in its input",
    )
