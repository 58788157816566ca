"""Issue 37 section 1 in a real terminal Neovim (tmux), 0.7.2 and 0.11.4, with ruff's own language server attached
beside forge: the agent's patch calls an undefined name; ruff's error is on screen, and the turn does not end as a
plain "completed": the notification names the new problem, and :ForgeLog shows what the model read."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import INIT, RETRY, Screen, pty_marks, script, workspace
from test_nvim_verify import ruff

pytestmark = pty_marks(120)

MAIN = "import os\n\nprint(os.name)\n"
RUFF = """
vim.cmd("filetype on")
if vim.fn.has("nvim-0.11") == 1 then
  vim.lsp.config("ruff", { cmd = { os.getenv("FORGE_RUFF"), "server" }, filetypes = { "python" }, root_markers = { ".forge.toml" } })
  vim.lsp.enable("ruff")
else
  local id
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "python",
    callback = function(args)
      id = id or vim.lsp.start_client({ name = "ruff", cmd = { os.getenv("FORGE_RUFF"), "server" }, root_dir = vim.fn.getcwd() })
      vim.lsp.buf_attach_client(args.buf, id)
    end,
  })
end
"""


def patch(old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": "main.py", "old_string": old, "new_string": new}}]}


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_ruffs_error_after_the_agents_edit_on_screen(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, main=MAIN, forge_toml=RETRY)
    s = Screen(nvim, ws, home, init_lua=RUFF + INIT, extra_env={"FORGE_RUFF": ruff()})
    try:
        s.wait_for("Forge: idle")
        s.command("sleep 1")  # ruff's first report on main.py
        script(ws, patch("print(os.name)", "print(undefined_name)"), {"text": "Done."})
        s.command("ForgeRun print a name")
        shown = s.wait_for("Forge: turn completed;")
        assert "Forge: turn completed; 1 new problem in main.py (2 requests, 1 tool call, 0 failures)" in shown, shown
        s.keys("j", "k")  # the reply float goes
        shown = s.wait_for("print(undefined_name)")
        s.command("lua vim.diagnostic.setloclist()")  # ruff's own diagnostics, as the person lists them
        s.wait_for("Undefined name `undefined_name`")
        s.command("lclose")
        s.command("ForgeLog")
        shown = s.wait_for("⚠ editor: 1 new problem in main.py")
        assert "main.py:3:7: error Ruff F821: Undefined name `undefined_name`" in shown, shown
        assert "left: 1 new problem in main.py" in shown, shown
        s.assert_clean()
    finally:
        s.close()
