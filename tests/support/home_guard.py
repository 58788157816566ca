"""The guard that no test touches the real user's forge-lsp folders (config, state).

A server a test starts with an environment of its own making (no XDG_* of the test's) keeps its state registry,
trust decisions and template cache in the user's home: ~/.local/state/forge-lsp/states.json then lists the test's
/tmp workspaces. The guard reads those folders after the run for any path of the run's own temporary folders:
nothing the user did meanwhile (their editor's server writing the same files) can make it fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

MAX_READ = 4 * 1024 * 1024
"""Bytes read of one file (a state database holds no paths of the run: its name is what would)."""


def user_folders(environ: Mapping[str, str]) -> list[Path]:
    """The user's forge-lsp folders that record paths, under environ (read before a test run replaces XDG_*): config
    and state (trust decisions, the registry of state files). The cache holds compiled templates only (and the real
    VS Code tests' install, too large to read)."""
    home = Path(environ.get("HOME") or Path.home())
    bases = {"XDG_CONFIG_HOME": home / ".config", "XDG_STATE_HOME": home / ".local" / "state"}
    return [Path(environ.get(name) or default) / "forge-lsp" for name, default in bases.items()]


def mentions(folders: Iterable[Path], marks: Iterable[str]) -> list[str]:
    """'FILE: MARK' for each file under folders whose name or text holds one of marks (a run's temporary
    folder): what a test wrote into the user's folders."""
    marks = [m for m in marks if m]
    found: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                path = Path(dirpath) / name
                try:
                    with path.open("rb") as f:
                        text = f.read(MAX_READ).decode("utf-8", "replace")
                except OSError:
                    continue
                found.extend(f"{path}: {mark}" for mark in marks if mark in text or mark in str(path))
    return found
