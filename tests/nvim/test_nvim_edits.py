"""Issue 25 items 3 and 4 in headless Neovim (0.7 and 0.11): marks stay where the agent did not edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec


def run_edits_spec(tmp_path: Path, nvim: str, sections: str, config: str = "") -> str:
    files = {"main.py": "import os\n\t# tabs\nport = 8080\nhost = 'é😀'\nend\n", "old.txt": "to be removed\n"}
    env = _workspaces(tmp_path, files=files)
    if config:
        (Path(env["FORGE_WORKSPACE"]) / ".forge.toml").write_text(config)  # after the trust: changed since
    return run_spec(nvim, "edits_spec.lua", {**env, "FORGE_SECTIONS": sections}, tmp_path, timeout=110)


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_agent_edit_keeps_marks_and_cursor_on_untouched_lines(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    run_edits_spec(tmp_path, installed(flavour, nvim), "marks")


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_review_before_an_edit_lands(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    run_edits_spec(tmp_path, installed(flavour, nvim), "review", config='edit_review = "confirm"\n')
