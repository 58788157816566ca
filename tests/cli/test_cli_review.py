"""forge-lsp run with edit_review = "confirm": each edit is shown as a diff on the terminal and asked about
(y / N / a = every edit of the run); without a terminal nobody can review, so the edit fails and nothing changes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from test_cli_confirm import run_in_terminal

from support import forkserver
from support.trust import trust_workspace


def patch(old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": "app.py", "old_string": old, "new_string": new}}]}


def review_workspace(root: Path, *responses: object) -> Path:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/script.json"\nedit_review = "confirm"\n[retry]\nmin_delay_ms = 10\n')
    (root / "app.py").write_text("a = 1\nport = 8080\n")
    trust_workspace(root)
    return root / "app.py"


def test_in_a_terminal_the_diff_is_shown_and_yes_applies_it(workspace: Path) -> None:
    app = review_workspace(workspace, patch("port = 8080", "port = 9090"), {"text": "done"})
    p, terminal = run_in_terminal(workspace, [b"y\n"])
    assert p.returncode == 0, terminal
    assert "--- a/app.py" in terminal and "-port = 8080" in terminal and "+port = 9090" in terminal, terminal
    assert "Apply the edit to app.py (patch)?" in terminal
    assert app.read_text() == "a = 1\nport = 9090\n"


def test_in_a_terminal_no_rejects_it_as_the_tool_failure(workspace: Path) -> None:
    app = review_workspace(workspace, patch("port = 8080", "port = 9090"), {"text": "left it"})
    p, terminal = run_in_terminal(workspace, [b"n\n"])
    assert b"the user rejected the edit to app.py" in p.stdout, p.stdout
    assert app.read_text() == "a = 1\nport = 8080\n"


def test_always_applies_the_rest_of_the_run_without_asking(workspace: Path) -> None:
    app = review_workspace(workspace, patch("port = 8080", "port = 9090"), patch("a = 1", "a = 2"), {"text": "done"})
    p, terminal = run_in_terminal(workspace, [b"a\n"])
    assert p.returncode == 0 and terminal.count("[y/N/a]") == 1, terminal
    assert app.read_text() == "a = 2\nport = 9090\n"


def test_without_a_terminal_nobody_can_review_and_nothing_changes(workspace: Path) -> None:
    app = review_workspace(workspace, patch("port = 8080", "port = 9090"), {"text": "ok"})
    p = subprocess.run(
        [*forkserver.command(), "run", "deploy", "-w", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdin=subprocess.DEVNULL,
    )
    assert 'edit_review is "confirm" and nobody can review the edit to app.py here' in p.stdout, p.stdout + p.stderr
    assert "[y/N/a]" not in p.stderr and "+port = 9090" not in p.stderr
    assert app.read_text() == "a = 1\nport = 8080\n"
