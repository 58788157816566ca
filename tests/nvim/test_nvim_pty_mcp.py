"""Issue 26 in a real terminal Neovim (tmux): :ForgeMcp as a person sees it, on 0.7 and 0.11.

mcp_servers in setup(): mcp-server-time (PyPI) and a server that exits at once. The list shows each
server's state and tools, `r` restarts the one under the cursor, `q` closes it, :ForgeMcp restart NAME
restarts one by name; no Lua error, no hit-enter prompt, and no MCP server left once Neovim has quit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import INIT, Screen, pty_marks, workspace

from support.processes import left_running_in

pytestmark = pty_marks(120)

MCP_INIT = INIT.replace(
    'require("forge").setup({ cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" } })',
    """local python = os.getenv("FORGE_PYTHON")
require("forge").setup({
  cmd = { python, "-m", "forge_lsp" },
  mcp_servers = {
    time = { command = python, args = { "-m", "mcp_server_time", "--local-timezone", "UTC" } },
    broken = { command = python, args = { "-c", "import sys; sys.exit(3)" } },
  },
})""",
)


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_mcp_on_screen(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    assert "mcp_servers" in MCP_INIT  # the setup() line of INIT was replaced
    ws, home = workspace(tmp_path, main="x = 1\n")
    s = Screen(nvim, ws, home, init_lua=MCP_INIT)
    try:
        s.wait_for("Forge: idle")
        s.command("ForgeMcp")
        shown = s.wait_for("time  ready (2 tools)  (mcp_servers in setup())")
        assert "broken  failed: " in shown, shown
        assert "  mcp_time_get_current_time  Get current time in a specific timezone" in shown, shown
        assert "r: restart the server under the cursor" in shown, shown
        # The failure is told once in the message area, in one line.
        assert shown.count("Forge: MCP server broken failed") <= 1, shown
        # `r` on one of time's lines restarts it.
        s.keys("-l", "/mcp_time_convert_time")
        s.keys("Enter")
        s.keys("r")
        shown = s.wait_for("Forge: MCP server time ready (2 tools)")
        s.assert_clean()
        s.keys("q")
        s.wait_for("main.py")
        s.command("ForgeMcp restart broken")
        shown = s.wait_for("Forge: MCP server broken failed")
        s.assert_clean()
        s.command("qa!")
        # (Bounded: a server that does not end on EOF is killed with its group after a few seconds.)
        left = left_running_in(ws, timeout=20)
        assert left == [], left
    finally:
        s.close()
