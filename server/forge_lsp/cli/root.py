"""The workspace a command means when --workspace is not given: the root above the current folder.

Found as git finds its repository: the nearest folder up to / holding a .forge.toml, else the
nearest holding a .git (the order Neovim's root_markers use), else the current folder. A marker
that is not the user's own (a .forge.toml someone left in /tmp) does not count.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from forge_lsp.cli.headless import check_workspace
from forge_lsp.domain.config import WORKSPACE_FILE
from forge_lsp.render import say

ROOT_MARKERS = (WORKSPACE_FILE, ".git")


def find_root(start: Path) -> tuple[Path, str | None]:
    """(the workspace root of start, the marker that made it one); (start, None) when no folder above has one."""
    start = start.resolve()
    for marker in ROOT_MARKERS:
        for folder in (start, *start.parents):
            try:
                if (folder / marker).lstat().st_uid == os.getuid():
                    return folder, marker
            except OSError:  # absent, or a folder we may not look into
                continue
    return start, None


def workspace_of(given: str | None, this_folder_hint: str) -> Path:
    """The workspace folder of a command: the one given (checked), or the root found above the current folder.

    A root other than the current folder is said in one line on stderr, with this_folder_hint: how to use
    the current folder instead ("-w ." for run)."""
    if given is not None:
        return check_workspace(Path(given))
    here = Path.cwd()
    root, marker = find_root(here)
    if root != here.resolve():
        say(sys.stderr, f"forge-lsp: workspace {root} (its {marker} is above this folder; {this_folder_hint} uses this folder)")
    return root
