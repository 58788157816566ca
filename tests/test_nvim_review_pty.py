"""Issue 25 item 4 in a terminal (tmux), Neovim 0.7 and 0.11: the review of an edit as a person sees it.

edit_review = "confirm": the diff is shown in forge://review and the default vim.ui.select asks;
2 (Reject) leaves the buffer as it was and the turn tells the failure, 1 (Accept) lands the edit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import neovims, trust
from test_nvim_pty import Screen, pytestmark, warm_up  # noqa: F401 (pytestmark: nvim, timeout, tmux)


def patch(old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": "main.py", "old_string": old, "new_string": new}}]}


@pytest.fixture(params=neovims(), ids=[f for f, _ in neovims()])
def screen(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Screen]:
    flavour, nvim = request.param
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".forge.toml").write_text('edit_review = "confirm"\n[retry]\nmin_delay_ms = 10\n')
    (ws / "main.py").write_text("import os\nport = 8080\n")
    home = tmp_path / "home"
    home.mkdir()
    trust(ws, home / "state")
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("main.py")
        s.wait_for("Forge: idle")
        warm_up(s)
        yield s
    finally:
        s.close()


def test_review_prompt_reject_then_accept(screen: Screen) -> None:
    (screen.ws / "script.json").write_text(json.dumps({"responses": [patch("port = 8080", "port = 9090"), {"text": "ok"}]}))
    screen.command("ForgeRun change the port")
    shown = screen.wait_for("Type number and <Enter>")
    assert "Forge: patch main.py: apply this edit?" in shown, shown
    assert "1: Accept" in shown and "2: Reject" in shown and "3: Accept all for this turn" in shown, shown
    assert "-port = 8080" in shown and "+port = 9090" in shown, shown  # the diff, above the question
    screen.assert_clean()
    screen.keys("2", "Enter")
    shown = screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 1 failure)")
    assert "port = 9090" not in shown and "forge://review" not in shown, shown
    screen.assert_clean()
    (screen.ws / "script.json").write_text(json.dumps({"responses": [patch("port = 8080", "port = 9090"), {"text": "ok"}]}))
    screen.command("ForgeRun change the port")
    screen.wait_for("Type number and <Enter>")
    screen.keys("1", "Enter")
    screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 0 failures)")
    screen.command("echo 'line 2: ' . getline(2)")  # the reply float may cover the line itself
    screen.wait_for("line 2: port = 9090")
    time.sleep(0.3)
    screen.assert_clean()
