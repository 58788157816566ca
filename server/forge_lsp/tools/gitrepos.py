"""The git repositories of a workspace and the files in them that git executes from.

The workspace's own .git, the nested ones (a submodule's .git file, a clone inside the tree:
found breadth first within MAX_WALK_DIRS folders, and every path .gitmodules names), and the git
directories inside a .git folder (.git/modules/*, .git/worktrees/*). A .git that is a link, a .git
file, or a config that is a link, is followed when it leads inside the workspace: what git reads
is its target. The sandbox keeps all of it from being changed or replaced; the file tools refuse it.
"""

from __future__ import annotations

import logging
import os
import re
from collections import deque
from pathlib import Path

log = logging.getLogger(__name__)

EXECUTES = ("config", "config.worktree", "hooks", "commondir")
"""In a git directory, what git runs later, outside the sandbox: config and config.worktree name programs,
hooks are programs, commondir names the folder whose config is read."""

MAX_GIT_DIRS = 200
"""Git directories and .git entries protected, at most."""

MAX_WALK_DIRS = 2000
"""Folders of the workspace searched for nested repositories (breadth first, so the shallow ones are found)."""

_GITMODULES_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


def _inside(ws: Path, path: Path) -> bool:
    return path == ws or ws in path.parents


def dot_gits(ws: Path) -> list[Path]:
    """Every .git entry (folder, file or link) in the workspace: its own first, then nested ones."""
    found: list[Path] = []
    queue = deque([ws])
    walked = 0
    while queue and walked < MAX_WALK_DIRS and len(found) < MAX_GIT_DIRS:
        here = queue.popleft()
        walked += 1
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git":
                found.append(Path(entry.path))  # never walked into: git_dirs looks inside
            elif entry.is_dir(follow_symlinks=False):
                queue.append(Path(entry.path))
    if queue:
        log.info("git: only the first %d folders of %s were searched for nested repositories", MAX_WALK_DIRS, ws)
    try:
        listed = _GITMODULES_PATH.findall((ws / ".gitmodules").read_text(encoding="utf-8", errors="replace")[:100_000])
    except OSError:
        listed = []
    for rel in listed:
        entry = ws / rel.strip("\"'") / ".git"
        if _inside(ws, entry.parent.resolve()) and os.path.lexists(entry) and entry not in found:
            found.append(entry)
    return found[:MAX_GIT_DIRS]


def _leads_to(entry: Path, ws: Path) -> Path | None:
    """The git directory a .git entry leads to (a folder: itself; a link: its target; a file: the
    gitdir it names), resolved, when it is a folder inside the workspace; else None."""
    try:
        if entry.is_file() and not entry.is_symlink():
            text = entry.read_text(encoding="utf-8", errors="replace")[:4096]
            if not text.startswith("gitdir:"):
                return None
            target = (entry.parent / text[len("gitdir:") :].strip()).resolve()
        else:
            target = entry.resolve()
    except (OSError, RuntimeError):
        return None
    return target if _inside(ws, target) and target != ws and target.is_dir() else None


def git_dirs(ws: Path, entries: list[Path] | None = None) -> list[Path]:
    """Every git directory of the workspace (resolved, inside it): each .git folder or the folder a .git link or
    file leads to, and the git directories inside them (submodules' .git/modules/*, worktrees' .git/worktrees/*).
    entries: what dot_gits(ws) found, when the caller has it."""
    found: list[Path] = []
    for entry in dot_gits(ws) if entries is None else entries:
        top = _leads_to(entry, ws)
        if top is None or top in found:
            continue
        found.append(top)
        for parent, dirs, files in os.walk(top):
            here = Path(parent)
            # Data folders hold no git directory: not walked (objects can be many thousands).
            dirs[:] = sorted(d for d in dirs if d not in ("objects", "refs", "logs", "hooks", "lfs", "info"))
            if here != top and "HEAD" in files and here not in found and len(found) < MAX_GIT_DIRS:
                found.append(here)
    return found[:MAX_GIT_DIRS]


def link_targets(ws: Path, dirs: list[Path] | None = None) -> list[Path]:
    """What the links among the git directories' EXECUTES entries lead to, resolved, when inside the workspace."""
    out = []
    for gitdir in git_dirs(ws) if dirs is None else dirs:
        for name in EXECUTES:
            path = gitdir / name
            if path.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):
                    continue
                if _inside(ws, target) and target != ws:
                    out.append(target)
    return out


def executes_from(ws: Path, path: Path) -> bool:
    """Whether git executes from a workspace path (resolved) that no .git lies in: a git directory a
    .git link or file leads to, or what a linked config or hooks folder leads to."""
    dirs = git_dirs(ws)
    for gitdir in dirs:
        if path == gitdir / "hooks" or gitdir / "hooks" in path.parents:
            return True
        if path.parent == gitdir and path.name in (*EXECUTES, "gitdir"):
            return True
    return any(path == t or t in path.parents for t in link_targets(ws, dirs))
