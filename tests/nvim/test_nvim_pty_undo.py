""":ForgeUndoTurn in a real terminal Neovim (tmux), 0.7.2 and 0.11.4: what a person sees when a turn is
undone, and when the undo is refused because they edited the file since."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import INIT, Screen, patch, pty_marks, script, workspace

pytestmark = pty_marks(120)


# A keystroke that lands as the server's edit arrives (its version then stale): `:lua TYPE_ON_EDIT = "text"`
# puts text on line 2 when the next workspace/applyEdit comes, before the plugin handles it.
TYPING_INIT = (
    INIT
    + """
local handlers = require("forge.client").handlers
local apply_edit = handlers["workspace/applyEdit"]
handlers["workspace/applyEdit"] = function(err, params, ctx, ...)
  if TYPE_ON_EDIT then
    vim.api.nvim_buf_set_lines(vim.fn.bufnr("main.py"), 1, 2, false, { TYPE_ON_EDIT })
    TYPE_ON_EDIT = nil
  end
  return apply_edit(err, params, ctx, ...)
end
"""
)


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_undo_turn_on_screen(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path)
    s = Screen(nvim, ws, home, init_lua=TYPING_INIT)
    try:
        s.wait_for("Forge: idle")
        made = {"tool_calls": [{"name": "write", "arguments": {"file_path": "made.py", "content": "y = 0\n"}}]}
        script(ws, patch("port = 8080", "port = 9090"), made, {"text": "Changed."})
        s.command("ForgeRun change the port")
        s.wait_for("Forge: turn completed")
        s.keys("j", "k")  # the reply float goes
        s.wait_for("port = 9090")
        assert (ws / "made.py").exists()
        s.command("ForgeUndoTurn")
        shown = s.wait_for("Forge: undid turn ")
        assert "restored main.py, removed made.py" in shown, shown
        s.wait_for("port = 8080")
        assert not (ws / "made.py").exists()
        s.assert_clean()
        # A second turn, then the person edits the line it changed: the undo is refused, naming the file.
        script(ws, patch("port = 8080", "port = 7070"), {"text": "Changed again."})
        s.command("ForgeRun change it again")
        s.wait_for("Forge: turn completed")
        s.keys("j", "k")
        s.wait_for("port = 7070")
        s.command("2")
        s.keys("A", "  # mine", "Escape")
        s.wait_for("port = 7070  # mine")
        s.command("sleep 500m")
        s.command("ForgeUndoTurn")
        shown = s.wait_for("Forge: forge.undoTurn: main.py changed since the turn: cannot undo; nothing was restored")
        assert "port = 7070  # mine" in shown and "Press ENTER" not in shown, shown
        s.assert_clean()
        # A third turn; the person types just as the undo's edit arrives, in an 80-column terminal: the undo
        # is refused in one line that names the file first, as a file changed since (no "newer than edits");
        # the typed line stays, and :ForgeLog has the whole cause.
        script(ws, patch("port = 7070  # mine", "port = 6060"), {"text": "Changed a third time."})
        s.command("ForgeRun change it a third time")
        s.wait_for("Forge: turn completed")
        s.keys("j", "k")
        s.wait_for("port = 6060")
        s.resize(80)
        s.command("sleep 500m")
        s.command('lua TYPE_ON_EDIT = "port = 6060  # typed"')
        s.command("ForgeUndoTurn")
        shown = s.wait_for("(:ForgeLog)")
        assert "Forge: forge.undoTurn: main.py changed since the turn" in shown, shown
        assert "port = 6060  # typed" in shown, shown
        assert "newer than edits" not in shown and "undid turn" not in shown, shown
        s.assert_clean()
        s.resize(200)
        s.command("ForgeLog")
        shown = s.wait_for("restoring main.py failed (the editor did not apply the edit to main.py: you changed it since)")
        s.assert_clean()
    finally:
        s.close()
