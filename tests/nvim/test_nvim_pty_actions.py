"""Issue 25 in a real terminal Neovim (tmux), 0.7 and 0.11: :ForgeFix on a diagnostic another namespace
published, the Fix picked from Neovim's own menu as a person would, and Edit selection asking for the
instruction."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import Screen, pty_marks, script, warm_screen

pytestmark = pty_marks(120)

LINT = (
    "lua vim.diagnostic.set(vim.api.nvim_create_namespace('mylinter'), 0, {{lnum = 1, col = 0, end_col = 4,"
    " severity = 1, source = 'mylinter', code = 'E042', message = 'port must not be hard-coded'}})"
)


@pytest.fixture(scope="module", params=neovims(), ids=[f for f, _ in neovims()])
def screen(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Screen]:
    flavour, nvim = request.param
    base = tmp_path_factory.mktemp(f"pty-actions-{flavour}")
    yield from warm_screen(installed(flavour, nvim), base, main="import os\nport = 8080\nhost = 'localhost'\n")


def choose(screen: Screen, title: str) -> None:
    """Neovim's menu (inputlist): type the number of the line that shows title."""
    shown = screen.wait_for(title)
    line = next(line for line in shown.splitlines() if title in line)
    number = line.strip().split(":")[0].rstrip(".")
    assert number.isdigit(), shown
    screen.keys("-l", number)
    screen.keys("Enter")


def test_fix_a_diagnostic_from_another_namespace(screen: Screen) -> None:
    script(screen.ws, {"text": "Moved the port to an environment variable."})
    screen.command(LINT)
    screen.keys("g", "g", "j")  # the cursor on line 2, where the diagnostic is
    screen.command("ForgeFix")
    choose(screen, "Forge: Fix port must not be hard-coded")
    shown = screen.wait_for("Forge: turn completed")
    assert "Moved the port to an environment variable." in shown
    prompts = sorted(Path(screen.ws, ".forge", "transcripts").glob("*.md"), key=lambda p: p.stat().st_mtime)
    last = prompts[-1].read_text()
    assert "source: mylinter" in last and "E042" in last and "- file: main.py" in last, last
    screen.wait_for("Forge: idle")
    time.sleep(0.3)
    screen.assert_clean()


def test_edit_selection_asks_for_the_instruction(screen: Screen) -> None:
    script(screen.ws, {"text": "Renamed it."})
    screen.command("echo ''")
    screen.command("1,2ForgeFix")
    choose(screen, "Forge: Edit selection")
    screen.wait_for("Forge: edit the selection how?")
    screen.keys("-l", "rename port to listen_port")
    screen.keys("Enter")
    shown = screen.wait_for("Renamed it.")
    assert "Forge: turn completed" in shown or screen.wait_for("Forge: turn completed")
    screen.wait_for("Forge: idle")
    time.sleep(0.3)
    screen.assert_clean()


def test_fix_on_a_line_without_a_diagnostic_says_so(screen: Screen) -> None:
    """:ForgeFix where there is nothing to fix: one line in Forge's words, no menu, no bare Neovim message."""
    screen.command("echo ''")
    screen.keys("g", "g")  # line 1: no diagnostic there
    screen.command("ForgeFix")
    shown = screen.wait_for("Forge: no diagnostic here; select lines (Explain/Edit) or :ForgeRun")
    time.sleep(0.5)  # a code action request would have answered by now
    shown = screen.text()
    assert "No code actions available" not in shown and "Type number" not in shown, shown
    screen.assert_clean()
