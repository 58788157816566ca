"""Issue 25 in headless Neovim (0.7 and 0.11): :ForgeFix with another namespace's diagnostic, Edit selection."""

from __future__ import annotations

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
