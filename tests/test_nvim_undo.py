""":ForgeUndoTurn in headless Neovim (0.7.2 and 0.11.4) on the real server: tests/nvim/undo_turn_spec.lua."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from test_nvim import ERRORS_ON_SCREEN, ROOT, _workspaces, neovims


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_undo_turn(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    spec = ROOT / "tests" / "nvim" / "undo_turn_spec.lua"
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=110,
        env=_workspaces(tmp_path),
        cwd=tmp_path,
    )
    output = p.stdout + p.stderr
    assert p.returncode == 0 and "PASS" in output, output
    assert not [e for e in ERRORS_ON_SCREEN if e in output], output
