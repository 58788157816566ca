"""What the loop did is visible (issue 38 item 8): the doom-loop and pending-todos reminders appear in the CLI's
output, the transcript and forge/event, not only in .forge/state.sqlite3; a turn's end says how many files it
changed."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.events import Event, Reminder

from support import forkserver
from support.trust import trust_workspace


def forge(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*forkserver.command(), *args], capture_output=True, text=True, timeout=90, env=env)


def script(root: Path, *responses: object) -> None:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n')
    trust_workspace(root)


SAME_READ = {"tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}]}


def test_a_doom_loop_reminder_is_printed_and_in_the_transcript(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    script(workspace, SAME_READ, SAME_READ, SAME_READ, {"text": "Done reading."})
    p = forge("run", "read a.txt", "-w", str(workspace))
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    (reminder,) = [line for line in lines if "reminder to the model" in line]
    assert reminder.startswith("  ↺ reminder to the model (doom loop): ")
    # Where it came: after the third identical call, before the answer it led to.
    assert lines.index(reminder) < next(i for i, line in enumerate(lines) if "assistant: Done reading." in line)
    (transcript,) = (workspace / ".forge" / "transcripts").glob("*.md")
    text = transcript.read_text()
    assert "## Reminder to the model (doom loop)" in text and "<system_reminder>" not in text
    assert "■ turn completed: 4 requests, 3 tool calls, 0 failures, 0 files changed;" in p.stdout, p.stdout


def test_a_pending_todos_reminder_is_an_event(workspace: Path) -> None:
    todo = {"tool_calls": [{"name": "todo_write", "arguments": {"todos": [{"content": "write tests", "status": "pending"}]}}]}
    script(workspace, todo, {"text": "All done."}, {"text": "Still one todo, sorry."})
    events: list[Event] = []
    runtime = WorkspaceRuntime(workspace)
    try:
        import asyncio

        asyncio.run(runtime.run("plan it", events.append))
    finally:
        runtime.close()
    # The turn carries no editor context from here (the prompt's template variables are not one).
    assert events[0].to_dict()["type"] == "turnStarted" and "context" not in events[0].to_dict()
    (reminder,) = [e for e in events if isinstance(e, Reminder)]
    assert reminder.kind == "pendingTodos" and "write tests" in reminder.text
    wire = reminder.to_dict()
    assert wire["type"] == "reminder" and wire["kind"] == "pendingTodos" and "write tests" in wire["text"]


def test_the_end_of_a_turn_counts_the_files_it_changed(workspace: Path) -> None:
    script(
        workspace,
        {"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "a\n"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"file_path": "b.txt", "content": "b\n"}}]},
        {"tool_calls": [{"name": "patch", "arguments": {"file_path": "a.txt", "old_string": "a", "new_string": "A"}}]},
        {"text": "Wrote two files."},
    )
    p = forge("run", "write them", "-w", str(workspace))
    assert "■ turn completed: 4 requests, 3 tool calls, 0 failures, 2 files changed;" in p.stdout, p.stdout
    script(workspace, {"text": "Nothing to do."})
    p = forge("run", "anything else?", "-w", str(workspace))
    assert "■ turn completed: 1 request, 0 tool calls, 0 failures, 0 files changed;" in p.stdout, p.stdout
    # The second turn's transcript, by its id (two turns in one second sort by their random part, not by time).
    turn = re.search(r"▶ turn (\S+) started", p.stdout)
    assert turn, p.stdout
    assert "files changed: 0" in (workspace / ".forge" / "transcripts" / f"{turn[1]}.md").read_text()


async def test_forge_run_answers_how_many_files_changed(workspace: Path) -> None:
    script(workspace, {"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "a\n"}}]}, {"text": "ok"})
    runtime = WorkspaceRuntime(workspace)
    try:
        summary = await runtime.run("write", lambda e: None)
    finally:
        runtime.close()
    assert summary.to_dict()["filesChanged"] == 1 and summary.to_dict()["repliesCut"] == 0
