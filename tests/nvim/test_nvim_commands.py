""":ForgeCommand in headless Neovim (0.7 and 0.11): completion of the names, a run with arguments, a pick."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec

GREET = "---\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n"


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_command_in_headless_neovim(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    commands = {
        ".forge/commands/greet.md": GREET,
        ".forge/commands/hi.md": "---\ndescription: Say hi\n---\nSay hi to the user.\n",
    }
    env = _workspaces(tmp_path, forge_toml="[retry]\nmin_delay_ms = 10\n", files=commands)  # trust covers them
    output = run_spec(nvim, "commands_spec.lua", env, tmp_path, timeout=110)
    assert "summary: ok" in output, output


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_command_completion_before_the_server_answers(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeCommand <Tab> with no server, and with one not answering yet: the built-in commands and the
    user's and the workspace's own from their files, at once, starting nothing; then the server's list."""
    nvim = installed(flavour, nvim)
    commands = {
        ".forge/commands/greet.md": GREET,
        ".forge/commands/ship.md": "---\nname: deploy\ndescription: Ship it\n---\nDeploy {{args}}.\n",
        ".forge/commands/bad.name.md": "---\ndescription: Not a command name\n---\nNot loaded.\n",
        ".forge/commands/README.md": "No front matter: not a command.\n",
    }
    env = _workspaces(tmp_path, forge_toml="[retry]\nmin_delay_ms = 10\n", files=commands)
    user = Path(env["XDG_CONFIG_HOME"]) / "forge-lsp" / "commands"
    user.mkdir(parents=True)
    (user / "hello.md").write_text("---\ndescription: Hello\n---\nSay hello.\n")
    (user / "broken.md").write_text("---\nagent: nobody\n---\nBroken.\n")  # no agent nobody: not loaded
    run_spec(nvim, "commands_complete_spec.lua", env, tmp_path, timeout=100)
