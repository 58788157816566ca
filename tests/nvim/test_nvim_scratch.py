"""Forge's scratch windows in Neovim (lua/forge/scratch.lua): the log closed with :bd (a common way to close a
window's buffer) and written to again stays a scratch buffer: `:qa` still quits (it said E37 / E162 "No write
since last change for buffer forge://log")."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from test_nvim import ROOT, installed, neovims

PLUGIN = ROOT / "editors" / "nvim"


@pytest.mark.nvim
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_log_closed_with_bd_then_written_again_lets_qa_quit(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    spec = ROOT / "tests" / "nvim" / "scratch_bd_spec.lua"
    p = subprocess.run(
        [installed(flavour, nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "FORGE_PLUGIN": str(PLUGIN)},
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    said = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert said[0]["name"] == "forge://log" and said[0]["lines"] == ["after :bd"], said
    assert said[0]["buftype"] == "nofile" and not said[0]["modified"], said
    assert len(said) == 1, said  # nothing refused :qall
