"""Issue 37 section 1 in headless Neovim (0.7 and 0.11) with ruff's own language server attached beside forge: its
diagnostics after the agent's edit reach the model, the fix of one is seen though ruff's report on the text before it
comes late, and a file no language server but forge looks at is answered at once (tests/nvim/verify_spec.lua)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec

APP = "import os\n\nprint(os.name)\n"
OTHER = "x = x_undefined\ny = 2\n"


def ruff() -> str:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(found).exists():
        pytest.skip("ruff is not installed (the dev extra has it)")
    return found


@pytest.mark.nvim
@pytest.mark.timeout(190)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_ruffs_error_after_an_agents_edit_reaches_the_model(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    env = _workspaces(tmp_path, files={"app.py": APP, "other.py": OTHER})
    env["FORGE_RUFF"] = ruff()
    output = run_spec(installed(flavour, nvim), "verify_spec.lua", env, tmp_path, timeout=180)
    assert all(
        f"OK {section}" in output
        for section in ("report", "hidden", "fail", "off", "stale report", "stale fail", "plain not open", "plain open")
    ), output
