"""forge-lsp --print-editor-config: what to paste into each editor's settings to start this very install.

An editor starts the server with its own PATH, not the shell's: a virtual environment that is not active there
(the README's install) is found only by its full path. So the lines name this install's executable, found from
the interpreter running now, never a bare `forge-lsp`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

from forge_lsp import __version__


def server_command() -> list[str]:
    """The argv that starts this install's server: the forge-lsp script beside this interpreter (a virtual
    environment's bin/), else this interpreter with -m forge_lsp."""
    # Not resolved: a virtual environment's python is a link to the base interpreter, which has no forge-lsp.
    python = Path(os.path.abspath(sys.executable))
    for name in ("forge-lsp", "forge-lsp.exe"):
        script = python.parent / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    return [str(python), "-m", "forge_lsp"]


def plugin_folder() -> Path | None:
    """editors/nvim of the clone this package was installed from (pip install -e .), if it is one."""
    folder = Path(__file__).resolve().parents[3] / "editors" / "nvim"
    return folder if (folder / "lua" / "forge" / "init.lua").is_file() else None


def _lua(text: str) -> str:
    """A Lua string literal (JSON's escapes of " and \\ are Lua's too; other text is left as it is)."""
    return json.dumps(text, ensure_ascii=False)


def editor_config() -> str:
    """The settings of Neovim, VS Code and Zed (ACP) that start this install, as text to copy."""
    cmd = server_command()
    lua_cmd = "{ " + ", ".join(_lua(a) for a in cmd) + " }"
    plugin = plugin_folder()
    lines = [
        f"# forge-lsp {__version__}: {' '.join(cmd)}",
        "# Editors start it by this path: the virtual environment need not be active.",
        "",
        "-- Neovim (init.lua)",
    ]
    if plugin is not None:
        lines.append(f"vim.opt.rtp:append({_lua(str(plugin))})")
    else:
        lines.append("-- the plugin: editors/nvim of the forge-lsp repository, on 'runtimepath' or through a plugin manager")
    lines += [
        f'require("forge").setup({{ cmd = {lua_cmd} }})',
        f'-- or, on 0.11: vim.lsp.config("forge", {{ cmd = {lua_cmd} }}); vim.lsp.enable("forge")',
        "",
        "// VS Code (settings.json)",
    ]
    if len(cmd) == 1:
        lines.append(f'"forge.serverPath": {json.dumps(cmd[0])}')
    else:
        lines.append(f'"forge.pythonPath": {json.dumps(cmd[0])}')
    acp = {"Forge": {"type": "custom", "command": cmd[0], "args": [*cmd[1:], "acp"], "env": {}}}
    lines += ["", "// Zed (settings.json), the Agent Client Protocol", f'"agent_servers": {json.dumps(acp)}', ""]
    return "\n".join(lines)


def print_editor_config(out: TextIO) -> int:
    """Print editor_config() (stdout: it is meant to be copied, or piped); exit 0."""
    out.write(editor_config())
    out.flush()
    return 0
