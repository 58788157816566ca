"""Issue 25 item 4 in a terminal (tmux), Neovim 0.7 and 0.11: the review of an edit as a person sees it.

edit_review = "confirm": the diff is shown in forge://review and the default vim.ui.select asks;
2 (Reject) leaves the buffer as it was and the turn tells the failure, 1 (Accept) lands the edit.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import RETRY, Screen, patch, pty_marks, script, warm_screen

pytestmark = pty_marks(90)


@pytest.fixture(params=neovims(), ids=[f for f, _ in neovims()])
def screen(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Screen]:
    flavour, nvim = request.param
    yield from warm_screen(installed(flavour, nvim), tmp_path, forge_toml='edit_review = "confirm"\n' + RETRY)


def test_review_prompt_reject_then_accept(screen: Screen) -> None:
    script(screen.ws, patch("port = 8080", "port = 9090"), {"text": "ok"})
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
    script(screen.ws, patch("port = 8080", "port = 9090"), {"text": "ok"})
    screen.command("ForgeRun change the port")
    screen.wait_for("Type number and <Enter>")
    screen.keys("1", "Enter")
    screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 0 failures)")
    screen.command("echo 'line 2: ' . getline(2)")  # the reply float may cover the line itself
    screen.wait_for("line 2: port = 9090")
    time.sleep(0.3)
    screen.assert_clean()
