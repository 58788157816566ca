""":ForgeCommand in a real terminal Neovim (tmux), as a person types it: <Tab> completes the name, the
command runs with its arguments and its reply is on screen; an unknown name is one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import Screen, pty_marks, script, workspace

pytestmark = pty_marks(90)


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_command_completes_and_runs(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, main="x = 1\n")
    # The user's own command, beside the user's config (Screen sets XDG_CONFIG_HOME to home/config).
    commands = home / "config" / "forge-lsp" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text("---\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n")
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("Forge: idle")
        script(ws, {"text": "Bonjour, Ada."})
        s.keys("Escape")
        s.keys("-l", ":ForgeCommand gr")
        s.keys("Tab")
        s.wait_for(":ForgeCommand greet")
        s.keys("-l", " Ada")
        s.keys("Enter")
        s.wait_for("Bonjour, Ada.")
        s.wait_for("Forge: turn completed (1 request,")
        s.assert_clean()
        (transcript,) = (ws / ".forge" / "transcripts").glob("*.md")
        assert "## Prompt\n\nSay hello to Ada in French." in transcript.read_text()
        s.command("ForgeCommand nope")
        shown = s.wait_for("unknown command /nope", fail_on=())
        assert "the commands are /explain, /greet, /review, /test" in shown, shown
        assert "stack traceback" not in shown and "E5108" not in shown, shown
    finally:
        s.close()
