"""The repeated-call stop in `forge-lsp run` (issue 37 section 3): exit 3, the interrupt's line, the transcript's
heading; reformatted and alternating repeats; 0 turns it off; an untrusted workspace may only tighten it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from test_cli import forge

from support.trust import trust_workspace

WRITE = {"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "alpha\n", "overwrite": True}}]}
READ = {"tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}]}


def shell_as(text: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "shell", "arguments": text}]}


REFORMATTED = [
    shell_as('{"command": "echo run >> log.txt", "description": "log"}'),
    shell_as('{ "command" : "echo run >> log.txt" , "description" : "log" }'),
    shell_as('{"description":"log","command":"echo run >> log.txt"}'),
    shell_as('{\n  "description": "log",\n  "command": "echo run >> log.txt"\n}'),
    shell_as('{"command":"echo run >> log.txt",\t"description":"log"}'),
    shell_as('{ "description": "log", "command": "echo run >> log.txt" }'),
]


def write_script(root: Path, *responses: object, toml: str = "") -> None:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text(f'model = "scripted/script.json"\n{toml}[retry]\nmin_delay_ms = 1\n')
    trust_workspace(root)  # as the user would, so its scripted model (and its loosened limit, for 0) applies


def transcript(workspace: Path) -> str:
    (path,) = (workspace / ".forge" / "transcripts").glob("*.md")
    return path.read_text()


def test_identical_repeats_exit_3_and_the_sixth_is_not_run(
    workspace: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    write_script(workspace, *[WRITE] * 8, {"text": "never asked"})
    p = forge("run", "write a.txt", "-w", str(workspace))
    assert p.returncode == 3, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines.count("  ✓ write ok") == 5
    (stopped,) = [line for line in lines if line.startswith("  ⊘")]
    assert stopped == (
        "  ⊘ write not run: the same write call was made 6 times in a row, the limit (max_repeated_calls_per_turn), "
        "and the turn was interrupted"
    ), stopped
    assert "  ⛔ interrupted: MaxRepeatedCallsReached {limit: 6, tool: write}" in lines
    assert (
        "     Repeated call limit (6) reached for this turn: write was called 6 times in a row with the same arguments; "
        "the last write call was not run" in lines
    )
    assert lines.index(stopped) < lines.index("  ⛔ interrupted: MaxRepeatedCallsReached {limit: 6, tool: write}")
    assert "■ turn interrupted: 6 requests, 6 tool calls, 0 failures, 1 file changed;" in p.stdout, p.stdout
    text = transcript(workspace)
    assert "## Interrupted: MaxRepeatedCallsReached" in text and "`MaxRepeatedCallsReached {limit: 6, tool: write}`" in text
    assert text.count("**Result:**") == 5 and text.count("**Not run:**") == 1 and "**Failed:**" not in text
    record_reliability(
        "a model writing the same file with the same content again and again, each write succeeding (forge-lsp run)",
        "8 identical writes scripted",
        "exit 3 at the 6th (not run), MaxRepeatedCallsReached printed and in the transcript's Interrupted heading",
    )


def test_reformatted_repeats_exit_3(workspace: Path) -> None:
    write_script(workspace, *REFORMATTED, {"text": "never asked"})
    p = forge("run", "log a run", "-w", str(workspace))
    assert p.returncode == 3, p.stdout + p.stderr
    assert "  ⛔ interrupted: MaxRepeatedCallsReached {limit: 6, tool: shell}" in p.stdout.splitlines()
    assert "reminder to the model (doom loop)" in p.stdout  # at the third, as the same call
    assert (workspace / "log.txt").read_text() == "run\n" * 5


def test_two_alternating_calls_are_a_loop_too(workspace: Path) -> None:
    write_script(workspace, *[WRITE, READ] * 7, {"text": "never asked"}, toml="max_repeated_calls_per_turn = 3\n")
    p = forge("run", "write and check", "-w", str(workspace))
    assert p.returncode == 3, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert "  ⛔ interrupted: MaxRepeatedCallsReached {limit: 3, tool: read}" in lines
    assert (
        "     Repeated call limit (3) reached for this turn: the same 2 calls (write, read) were made 3 times in a row; "
        "the last read call was not run" in lines
    )
    assert (lines.count("  ✓ write ok"), lines.count("  ✓ read ok")) == (3, 2)


def test_zero_turns_the_stop_off(workspace: Path) -> None:
    write_script(workspace, *[WRITE] * 8, {"text": "Wrote it eight times."}, toml="max_repeated_calls_per_turn = 0\n")
    p = forge("run", "write a.txt", "-w", str(workspace))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines().count("  ✓ write ok") == 8 and "Wrote it eight times." in p.stdout
    assert "max_repeated_calls_per_turn" not in p.stdout + p.stderr  # a key of the schema, taken as it is


def test_an_untrusted_workspace_may_not_loosen_the_users_limit(workspace: Path, tmp_path: Path) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("max_repeated_calls_per_turn = 3\n")
    script = tmp_path / "script.json"  # the user's own script (outside the workspace), named on the command line
    script.write_text(json.dumps({"responses": [WRITE] * 5 + [{"text": "never asked"}]}))
    (workspace / ".forge.toml").write_text("max_repeated_calls_per_turn = 10\n")
    p = forge("run", "write a.txt", "-w", str(workspace), "-m", f"scripted/{script}")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "  ⛔ interrupted: MaxRepeatedCallsReached {limit: 3, tool: write}" in p.stdout.splitlines()
    assert ".forge.toml:1 max_repeated_calls_per_turn" in p.stderr, p.stderr
