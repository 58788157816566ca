""":ForgeCommand in headless Neovim (0.7 and 0.11): completion of the names, a run with arguments, a pick."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_nvim import ERRORS_ON_SCREEN, ROOT, neovims, trust, user_config

GREET = "---\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n"


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_command_in_headless_neovim(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    ws = tmp_path / "project"
    (ws / ".forge" / "commands").mkdir(parents=True)
    (ws / ".forge" / "commands" / "greet.md").write_text(GREET)
    (ws / ".forge" / "commands" / "hi.md").write_text("---\ndescription: Say hi\n---\nSay hi to the user.\n")
    (ws / ".forge.toml").write_text("[retry]\nmin_delay_ms = 10\n")
    (ws / "main.py").write_text("x = 1\n")
    trust(ws, tmp_path / "state")  # after the command is written: trust covers it
    env = {
        **os.environ,
        "FORGE_PYTHON": sys.executable,
        "FORGE_WORKSPACE": str(ws),
        "FORGE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(user_config(tmp_path / "config")),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    spec = ROOT / "tests" / "nvim" / "commands_spec.lua"
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        cwd=tmp_path,
    )
    output = p.stdout + p.stderr
    assert p.returncode == 0, output
    assert "summary: ok" in output, output
    assert not [e for e in ERRORS_ON_SCREEN if e in output], output
