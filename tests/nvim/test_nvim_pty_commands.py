""":ForgeCommand in a real terminal Neovim (tmux), as a person types it: <Tab> completes the name, the
command runs with its arguments and its reply is on screen; an unknown name is one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims, trust
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


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_command_tab_before_the_server_starts(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeCommand <Tab> in a git repository, where no server runs until a :Forge command: the built-in
    commands and the user's and the workspace's own are offered at once (from their files), starting no
    server; the one picked runs."""
    nvim = installed(flavour, nvim)
    ws = tmp_path / "project"
    (ws / ".forge" / "commands").mkdir(parents=True)
    (ws / ".forge" / "commands" / "ship.md").write_text("---\nname: deploy\n---\nDeploy {{args}} now.\n")
    (ws / ".git").mkdir()
    (ws / "main.py").write_text("x = 1\n")
    home = tmp_path / "home"
    (home / "config" / "forge-lsp" / "commands").mkdir(parents=True)
    (home / "config" / "forge-lsp" / "commands" / "hello.md").write_text("---\ndescription: Hi\n---\nSay hello.\n")
    trust(ws, home / "state")
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("main.py")
        s.keys("-l", ":ForgeCommand ")
        s.keys("Tab")
        shown = s.wait_for(":ForgeCommand deploy", timeout=5)
        assert "explain" in shown and "hello" in shown and "review" in shown and "test" in shown, shown
        s.keys("C-u")
        s.keys("Escape")
        s.command("lua print(require('forge').get_client() and 'a server runs' or 'no server runs')")
        shown = s.wait_for("server runs")
        assert "no server runs" in shown, shown
        script(ws, {"text": "Deployed."})
        s.keys("-l", ":ForgeCommand de")
        s.keys("Tab")
        s.wait_for(":ForgeCommand deploy")
        s.keys("-l", " staging")
        s.keys("Enter")
        s.wait_for("Deployed.")
        s.assert_clean()
        (transcript,) = (ws / ".forge" / "transcripts").glob("*.md")
        assert "## Prompt\n\nDeploy staging now." in transcript.read_text()
    finally:
        s.close()
