"""Issue 25 items 3 and 4 in headless Neovim (0.7 and 0.11): marks stay where the agent did not edit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from test_nvim import ERRORS_ON_SCREEN, ROOT, _workspaces, neovims

SPEC = ROOT / "tests" / "nvim" / "edits_spec.lua"


def run_spec(tmp_path: Path, nvim: str, sections: str, config: str = "") -> str:
    env = _workspaces(tmp_path)
    ws = Path(env["FORGE_WORKSPACE"])
    (ws / "main.py").write_text("import os\n\t# tabs\nport = 8080\nhost = 'é😀'\nend\n")
    (ws / "old.txt").write_text("to be removed\n")
    if config:
        (ws / ".forge.toml").write_text(config)
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SPEC}"],
        capture_output=True,
        text=True,
        timeout=110,
        env={**env, "FORGE_SECTIONS": sections},
        cwd=tmp_path,
    )
    output = p.stdout + p.stderr
    assert p.returncode == 0 and "PASS" in output, output
    assert not [e for e in ERRORS_ON_SCREEN if e in output], output
    return output


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_agent_edit_keeps_marks_and_cursor_on_untouched_lines(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    run_spec(tmp_path, nvim, "marks")


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_review_before_an_edit_lands(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    run_spec(tmp_path, nvim, "review", config='edit_review = "confirm"\n')
