"""Issue 25 in headless Neovim (0.7 and 0.11): :ForgeFix with another namespace's diagnostic, Edit selection."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_code_actions_with_every_namespace_and_edit_selection(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path, files={"main.py": "import os\nport = 8080\nhost = 'localhost'\n"})
    run_spec(nvim, "issue25_spec.lua", env, tmp_path, timeout=110)


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_standard_code_action_key_offers_a_fix_for_ruffs_diagnostic(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 35: with ruff server attached beside forge, vim.lsp.buf.code_action() / `gra` on ruff's F401 offers
    "Forge: Fix ..." (Neovim 0.11 sent forge only its own diagnostics: only :ForgeFix did)."""
    nvim = installed(flavour, nvim)
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    env = _workspaces(tmp_path, files={"main.py": "import os\nport = 8080\n"})
    output = run_spec(nvim, "code_action_key_spec.lua", {**env, "FORGE_RUFF": ruff}, tmp_path, timeout=110)
    assert "MENU " in output, output
