"""Neovim's command table (lua/forge/commands.lua): the :Forge commands, <Plug> mappings and Lua API it makes,
on both Neovims; the server commands it sends are the server's; doc/forge.txt tells each of them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.lsp.server import COMMANDS
from test_nvim import ROOT, installed, neovims

PLUGIN = ROOT / "editors" / "nvim"


def table(nvim: str, cwd: Path) -> dict[str, Any]:
    spec = ROOT / "tests" / "nvim" / "command_table_spec.lua"
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "FORGE_PLUGIN": str(PLUGIN)},
        cwd=cwd,
    )
    assert p.returncode == 0, p.stderr
    line = next(line for line in (p.stdout + p.stderr).splitlines() if line.startswith("{"))
    return json.loads(line)  # type: ignore[no-any-return]


@pytest.mark.nvim
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_the_command_table_makes_the_commands_mappings_and_api(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    found = table(installed(flavour, nvim), tmp_path)
    rows = found["rows"]
    assert found["defined"] == sorted(row["name"] for row in rows)
    assert len(rows) >= 14
    help_text = (PLUGIN / "doc" / "forge.txt").read_text()
    for row in rows:
        assert row["exported"], f'require("forge").{row["api"]} is not the function of {row["name"]}'
        assert f"*:{row['name']}*" in help_text, row["name"]
        assert f"*forge.{row['api']}()*" in help_text, row["api"]
        for plug in row["plugs"]:
            assert plug["mapped"], (row["name"], plug)
            assert f"<Plug>(forge-{plug['name']})" in help_text, plug
        for name in row["sends"]:
            assert name in COMMANDS, (row["name"], name)
