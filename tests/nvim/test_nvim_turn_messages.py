"""Issue 35 in headless Neovim (0.7 and 0.11): what a turn says. The cancel notification names what the server
stopped (forge.cancel's answer), and :ForgeLog keeps the user's prompt and one context line."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import _workspaces, installed, neovims, run_spec


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_cancel_says_what_the_server_stopped_and_the_log_keeps_the_prompt_and_one_context_line(
    tmp_path: Path, flavour: str, nvim: str | None
) -> None:
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path, forge_toml="[retry]\nmin_delay_ms = 10\n")
    run_spec(nvim, "turn_messages_spec.lua", env, tmp_path, timeout=110)
