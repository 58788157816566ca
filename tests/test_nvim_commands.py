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
