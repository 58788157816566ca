"""Issue 37 section 3 in headless Neovim (0.7 and 0.11): the repeated-call interrupt is told, shown and continued
like the failure limit's (tests/nvim/repeated_calls_spec.lua)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_repeated_calls_interrupt_is_told_shown_and_continued(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path, forge_toml="[retry]\nmin_delay_ms = 10\n")
    run_spec(nvim, "repeated_calls_spec.lua", env, tmp_path, timeout=110)
