"""Issue 35 section 1 in a real terminal Neovim (tmux), 0.7.2 and 0.11.4: the newcomer's turn. main.py is
open and unmodified; the agent patches it and runs its test in the same turn: 0 failures, the buffer is
left unmodified, the disk holds the fix. Then a line the person typed and did not save: the agent's edit
goes into the buffer, nothing is written, the line survives, and the person is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import Screen, pty_marks, script, shell, workspace

pytestmark = pty_marks(120)

MAIN = "def add(a, b):\n    return a - b\n"
TEST_MAIN = (
    "import unittest\n\nfrom main import add\n\n\n"
    "class TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


def patch(old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": "main.py", "old_string": old, "new_string": new}}]}


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_newcomers_turn_on_screen(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, main=MAIN)
    (ws / "test_main.py").write_text(TEST_MAIN)
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("Forge: idle")
        script(ws, patch("a - b", "a + b"), shell("python3 -m unittest -q test_main"), {"text": "Fixed."})
        s.command("ForgeRun fix add")
        shown = s.wait_for("Forge: turn completed")
        assert "Forge: turn completed (3 requests, 2 tool calls, 0 failures)" in shown, shown
        s.keys("j", "k")  # the reply float goes
        s.wait_for("return a + b")
        s.command("set modified?")
        s.wait_for("nomodified")  # left unmodified: it is what the disk holds
        assert (ws / "main.py").read_text() == "def add(a, b):\n    return a + b\n"
        s.command("checktime")
        s.command("echo 'checked'")
        shown = s.wait_for("checked")
        assert "W11" not in shown and "W12" not in shown and "changed" not in shown.lower(), shown
        s.assert_clean()
        # The person types a line and does not save it; the agent edits the file again.
        s.command("$")
        s.keys("o", "# my unsaved line", "Escape")
        s.wait_for("# my unsaved line")
        s.command("sleep 500m")
        script(ws, patch("a + b", "b + a"), shell("python3 -m unittest -q test_main"), {"text": "Swapped."})
        s.command("ForgeRun swap them")
        shown = s.wait_for("Forge: turn completed")
        s.keys("j", "k")
        shown = s.wait_for("return b + a")
        assert "# my unsaved line" in shown, shown
        s.command("set modified?")
        s.wait_for("  modified")
        assert (ws / "main.py").read_text() == "def add(a, b):\n    return a + b\n"  # never written for them
        s.command("messages")
        shown = s.wait_for("main.py has unsaved changes of yours, so the agent's edit stays in the buffer")
        s.dismiss()
        s.assert_clean()
    finally:
        s.close()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_agents_sed_reaches_the_buffer_on_screen(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """The other direction: the agent's shell changes main.py (sed -i) and patches it again. The buffer shows
    the shell's change before the patch, which applies; :w then writes without "The file has been changed
    since reading it". A line the person typed and did not save survives the next sed, and they are told."""
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, main=MAIN)
    (ws / "test_main.py").write_text(TEST_MAIN)
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("Forge: idle")
        script(
            ws,
            shell("sed -i 's/a - b/a + b/' main.py"),
            patch("a + b", "a + b  # fixed"),
            shell("python3 -m unittest -q test_main"),
            {"text": "Fixed."},
        )
        s.command("ForgeRun fix add")
        shown = s.wait_for("Forge: turn completed")
        assert "Forge: turn completed (4 requests, 3 tool calls, 0 failures)" in shown, shown
        s.keys("j", "k")  # the reply float goes
        s.wait_for("return a + b  # fixed")
        s.command("set modified?")
        s.wait_for("nomodified")
        s.command("w")
        shown = s.wait_for('"main.py" 2L')
        assert "changed since reading" not in shown and "W11" not in shown and "(y/n)" not in shown, shown
        assert (ws / "main.py").read_text() == "def add(a, b):\n    return a + b  # fixed\n"
        s.assert_clean()
        # The person types a line and does not save it; the agent's shell changes the file again.
        s.command("$")
        s.keys("o", "# my unsaved line", "Escape")
        s.wait_for("# my unsaved line")
        s.command("sleep 500m")
        script(ws, shell("sed -i 's/  # fixed//' main.py"), {"text": "Tidied."})
        s.command("ForgeRun tidy")
        s.wait_for("Forge: turn completed")
        s.keys("j", "k")
        s.command("messages")
        shown = s.wait_for("main.py changed on disk (the agent's shell call) while it has unsaved changes of yours")
        s.dismiss()
        shown = s.wait_for("# my unsaved line")
        assert "return a + b  # fixed" in shown, shown  # the buffer as the person left it
        s.command("set modified?")
        s.wait_for("  modified")
        assert (ws / "main.py").read_text() == "def add(a, b):\n    return a + b\n"
        s.assert_clean()
    finally:
        s.close()
