"""Issue 25 in headless Neovim (0.7 and 0.11): :ForgeFix with another namespace's diagnostic, Edit selection."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from test_nvim import ERRORS_ON_SCREEN, ROOT, _workspaces, neovims


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_code_actions_with_every_namespace_and_edit_selection(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    env = _workspaces(tmp_path)
    (Path(env["FORGE_WORKSPACE"]) / "main.py").write_text("import os\nport = 8080\nhost = 'localhost'\n")
    spec = ROOT / "tests" / "nvim" / "issue25_spec.lua"
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        cwd=tmp_path,
    )
    output = p.stdout + p.stderr
    assert p.returncode == 0 and "PASS" in output, output
    assert not [e for e in ERRORS_ON_SCREEN if e in output], output
