"""The nearest existing paths to one that is not there, for the error a tool gives about it.

A model that guessed a path wrong guesses again, often many times ("file not found" alone tells it nothing);
the paths that are there and look like it (the same name in another folder, a near spelling) let it take the
right one next. Cheap and bounded: one walk of at most MAX_ENTRIES entries, the heavy folders (.git,
node_modules, virtual environments, caches) left out, links not followed, a few names given.
"""

from __future__ import annotations

import difflib
import os
import time
from pathlib import Path, PurePosixPath

MAX_ENTRIES = 20_000
"""Entries the walk looks at, at most (a workspace bigger than that is searched in part)."""
MAX_WALK_S = 0.5
"""Seconds the walk may take, at most (a slow file system gives fewer hints, never a slow error)."""
SHOWN = 5
"""Paths named, at most."""
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".forge",
        ".cache",
        "target",
        ".gradle",
        ".next",
    }
)
"""Folders not walked: tools and caches, never what a model means to read."""


def workspace_paths(root: Path) -> list[str]:
    """Files and folders under root (relative, POSIX), at most MAX_ENTRIES, in at most MAX_WALK_S (blocking)."""
    found: list[str] = []
    deadline = time.monotonic() + MAX_WALK_S
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        base = Path(folder).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        found += [prefix + name for name in (*dirs, *sorted(files))]
        if len(found) >= MAX_ENTRIES or time.monotonic() > deadline:
            break
    return found[:MAX_ENTRIES]


def nearest(wanted: str, paths: list[str], shown: int = SHOWN) -> list[str]:
    """The paths most like ``wanted``: the same name anywhere first (those whose folder is most alike before
    others), then near spellings of the whole path, then near spellings of the name in the same folder."""
    want = PurePosixPath(wanted)
    name, parent = want.name, want.parent.as_posix()
    if not name:
        return []

    def folder_likeness(path: str) -> float:
        return difflib.SequenceMatcher(None, PurePosixPath(path).parent.as_posix(), parent).ratio()

    same_name = sorted((p for p in paths if PurePosixPath(p).name == name and p != wanted), key=folder_likeness, reverse=True)
    near_path = difflib.get_close_matches(wanted, paths, n=shown, cutoff=0.75)
    names = {PurePosixPath(p).name for p in paths}
    close_names = set(difflib.get_close_matches(name, list(names), n=shown, cutoff=0.8))
    near_name = sorted(
        (p for p in paths if PurePosixPath(p).name in close_names and PurePosixPath(p).name != name),
        key=folder_likeness,
        reverse=True,
    )
    out: list[str] = []
    for path in (*same_name, *near_path, *near_name):
        if path not in out and path != wanted:
            out.append(path)
    return out[:shown]


def hint(root: Path, wanted: str) -> str:
    """The end of a "not found" error: the nearest existing paths, or how to look for one (blocking)."""
    found = nearest(wanted, workspace_paths(root))
    if not found:
        return "; nothing in the workspace has that name or one close to it (fs_search with a glob lists files)"
    return "; the nearest existing paths: " + ", ".join(found)
