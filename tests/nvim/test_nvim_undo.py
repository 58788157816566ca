""":ForgeUndoTurn in headless Neovim (0.7.2 and 0.11.4) on the real server: tests/nvim/undo_turn_spec.lua."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_undo_turn(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    run_spec(nvim, "undo_turn_spec.lua", _workspaces(tmp_path), tmp_path, timeout=110)
