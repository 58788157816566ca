"""What a sandboxed command may not change in the workspace, because something outside the
sandbox runs it later: git (every repository's config, hooks, .git entry), the user's shell and
desktop (startup files, when the workspace holds the home folder), forge-lsp itself (its config,
state and trust store) and the editors that feed it.

Four ways, for bwrap (see sandbox.bwrap_argv) and for after the command (restore):

- read_only: bound read-only over themselves;
- pinned: folders bound onto themselves (still writable): a mount point cannot be renamed or
  removed, so neither a protected file's folder nor the folders above it can be moved aside and
  made again; git directories are pinned so .git cannot be replaced by a writable copy;
- disarmed: a repository the command made (git init, a clone; or a new git directory inside one,
  .git/modules/*, .git/worktrees/*) is nobody's yet and cannot be bound in advance: when the
  command ends, what git would run from it later is taken out (see gitrepos.disarm);
- guarded: what cannot be mounted over: a path that does not exist yet (it may not appear) and
  a link (it must keep leading where it did). What the command changed there is removed, and a
  link put back, when it ends; a command still running is not watched meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forge_lsp.tools.gitrepos import EXECUTES, disarm, dot_gits, git_dirs

log = logging.getLogger(__name__)


@dataclass
class Protection:
    """The mounts and guards that keep a workspace's executed-later files as they are."""

    pinned: list[Path] = field(default_factory=list)
    read_only: list[Path] = field(default_factory=list)
    guards: dict[Path, str | None] = field(default_factory=dict)
    """path -> the text of the link it must stay, or None: it must not exist."""
    repos: list[Path] = field(default_factory=list)
    """The .git entries there were before the command (dot_gits)."""
    git_dirs: list[Path] = field(default_factory=list)
    """The git directories there were before the command (git_dirs): a new one is the command's."""


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def _pin_folders(ws: Path, path: Path, pinned: set[Path]) -> None:
    """Pin every existing folder between the workspace root (exclusive) and path (exclusive)."""
    for parent in path.parents:
        if parent == ws or not _contains(ws, parent):
            break
        if parent.is_dir() and not parent.is_symlink():
            pinned.add(parent)


def _guard_link(ws: Path, path: Path, out: Protection, pinned: set[Path]) -> None:
    """A link among the protected files: it must stay; what it leads to inside the workspace is read-only."""
    with contextlib.suppress(OSError):
        out.guards[path] = os.readlink(path)
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        return
    if _contains(ws, target) and target != ws and target.exists():
        out.read_only.append(target)
        _pin_folders(ws, target, pinned)


def _keep(ws: Path, path: Path, out: Protection, pinned: set[Path]) -> None:
    """path stays as it is: a link stays that link, what exists is read-only, what does not may not appear."""
    if path.is_symlink():
        _guard_link(ws, path, out, pinned)
    elif os.path.lexists(path):
        out.read_only.append(path)
    else:
        out.guards[path] = None


def protection(
    ws: Path, home: str | None, own: tuple[list[Path], list[Path]], editor_files: Sequence[str], startup: Sequence[str]
) -> Protection:
    """What to protect in the workspace ws (resolved): its git repositories; with home inside it, the
    startup files and editors' folders (editor_files, made first when missing); forge-lsp's own folders
    (made first) and files of own."""
    out = Protection()
    pinned: set[Path] = set()
    entries = dot_gits(ws)
    out.repos = entries
    for entry in entries:
        _pin_folders(ws, entry, pinned)
        if entry.is_symlink():
            _guard_link(ws, entry, out, pinned)
        elif entry.is_file():
            out.read_only.append(entry)
    out.git_dirs = git_dirs(ws, entries)
    for gitdir in out.git_dirs:
        _pin_folders(ws, gitdir, pinned)
        pinned.add(gitdir)
        for name in EXECUTES:
            _keep(ws, gitdir / name, out, pinned)
    made: list[Path] = []
    if home and Path(home).is_absolute() and _contains(ws, Path(home).resolve()):
        root = Path(home).resolve()
        for rel in startup:
            path = root / rel
            _pin_folders(ws, path, pinned)
            _keep(ws, path, out, pinned)
        made += [root / rel for rel in editor_files]
    folders, files = own
    made += folders
    for path in files:
        if _contains(ws, path):
            _pin_folders(ws, path, pinned)
            if os.path.lexists(path) and not path.is_symlink():
                out.read_only.append(path)
            elif not os.path.lexists(path):
                out.guards[path] = None
    for folder in made:
        if not _contains(ws, folder) or folder == ws:
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.debug("cannot make %s before the sandbox: %s", folder, exc)
        if folder.is_dir() and not folder.is_symlink():
            _pin_folders(ws, folder, pinned)
            out.read_only.append(folder)
    out.pinned = sorted(pinned, key=lambda p: (len(p.parts), str(p)))
    return out


def restore(guards: dict[Path, str | None]) -> list[Path]:
    """Undo what a command did to guarded paths: remove what appeared, put a changed link back; the ones undone."""
    undone = []
    for path, link in guards.items():
        try:
            if link is not None and path.is_symlink() and os.readlink(path) == link:
                continue
            if link is None and not os.path.lexists(path):
                continue
            if os.path.lexists(path):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            if link is not None:
                os.symlink(link, path)
        except OSError as exc:
            log.warning("could not undo what a sandboxed command did to %s: %s", path, exc)
            continue
        undone.append(path)
    return undone


def disarm_new(ws: Path, before: Protection) -> list[str]:
    """After a command: the git directories it made, each with what git would run taken out (disarm);
    returns what was taken ("sub/.git/config core.fsmonitor", "sub/.git/hooks/pre-commit")."""
    ws = ws.resolve()
    now = git_dirs(ws, [*before.repos, *(e for e in dot_gits(ws) if e not in before.repos)])
    old = set(before.git_dirs)
    taken: list[str] = []
    for gitdir in now:
        if gitdir not in old:
            rel = gitdir.relative_to(ws).as_posix()
            taken += [f"{rel}/{what}" for what in disarm(gitdir, keep_commondir=old)]
    return taken
