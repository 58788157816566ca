"""What an editor shows a person: log lines, notifications and Problems (issue 10, Editors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient
from test_lsp import command, transcript_uri, until

from conftest import write_script

pytestmark = pytest.mark.timeout(60)


def assistant_lines(client: LanguageClient) -> list[str]:
    return [m.message for m in client.log_messages if m.message.lstrip().startswith("assistant:")]


async def test_log_has_one_line_per_assistant_message(client: LanguageClient, ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    write_script(
        ws,
        {"text": "Let me read the file first.", "tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}]},
        {"text": "It says hello, nothing else."},
    )
    result = await command(client, "forge.run", {"prompt": "what is in a.txt?"})
    assert result["status"] == "completed"
    await until(lambda: any(m.message.startswith("■ turn completed") for m in client.log_messages))
    # The scripted model streams word by word; the log gets each message whole, in order, once.
    assert assistant_lines(client) == ["  assistant: Let me read the file first.", "  assistant: It says hello, nothing else."]
    lines = [m.message for m in client.log_messages]
    read_line = next(i for i, m in enumerate(lines) if "→ read: a.txt" in m)
    assert lines.index("  assistant: Let me read the file first.") < read_line


async def test_failed_read_of_missing_file_puts_no_problem_on_it(client: LanguageClient, ws: Path) -> None:
    (ws / "there.py").write_text("x = 1\n")
    missing = {"tool_calls": [{"name": "read", "arguments": {"file_path": "missing.py"}}]}
    patch = {"tool_calls": [{"name": "patch", "arguments": {"file_path": "there.py", "old_string": "nope", "new_string": "y"}}]}
    write_script(ws, missing, patch, {"text": "gave up"})
    result = await command(client, "forge.run", {"prompt": "read missing.py"})
    assert result["status"] == "completed" and result["failures"] == 2
    transcript = client.diagnostics[transcript_uri(ws, result["turnId"])]
    assert [d.code for d in transcript] == ["tool-retry", "tool-retry"]
    assert (ws / "missing.py").as_uri() not in client.diagnostics
    assert not (ws / "missing.py").exists()
    # A failure about a file that exists is still published on it.
    (there,) = client.diagnostics[(ws / "there.py").as_uri()]
    assert there.code == "tool-retry" and "patch failed" in there.message


async def test_interrupt_is_one_notification_and_continue_runs(client: LanguageClient, ws: Path) -> None:
    client.answers.answer = "Continue"  # type: ignore[attr-defined]
    fail: dict[str, Any] = {"tool_calls": [{"name": "shell", "arguments": {"command": "exit 1"}}]}
    write_script(ws, fail, fail, fail, {"text": "recovered"})
    result = await command(client, "forge.run", {"prompt": "go"})
    assert result["status"] == "interrupted"
    await until(lambda: sum(m.message.startswith("■ turn") for m in client.log_messages) == 2)
    shown = [m.message for m in client.messages] + [r.message for r in client.answers.requests]  # type: ignore[attr-defined]
    assert len(shown) == 1 and "Maximum tool failure limit (3)" in shown[0] and "Continue" in shown[0]
    finished = [m.message for m in client.log_messages if m.message.startswith("■ turn")]
    assert finished[0].startswith("■ turn interrupted") and finished[1].startswith("■ turn completed")
