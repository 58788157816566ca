"""Issue 35 section 1 in headless Neovim (0.7 and 0.11): the agent's edits reach the disk (tests/nvim/disk_spec.lua)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec

CALC = "def add(a, b):\n    return a - b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


@pytest.mark.nvim
@pytest.mark.timeout(170)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_agents_edits_reach_the_disk_and_a_dirty_buffer_is_kept(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    env = _workspaces(tmp_path, files={"calc.py": CALC, "test_calc.py": TEST_CALC})
    run_spec(installed(flavour, nvim), "disk_spec.lua", env, tmp_path, timeout=160)


@pytest.mark.nvim
@pytest.mark.timeout(190)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_what_the_agents_shell_changes_reaches_the_unmodified_buffers(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """The other direction (tests/nvim/reload_spec.lua): sed -i on an open file, then a patch of it."""
    env = _workspaces(tmp_path, files={"calc.py": CALC, "test_calc.py": TEST_CALC})
    run_spec(installed(flavour, nvim), "reload_spec.lua", env, tmp_path, timeout=180)
