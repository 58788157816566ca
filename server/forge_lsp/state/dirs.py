"""Where a workspace's state lives, and which state file may be opened.

.forge/ in the workspace, or the user's state folder when .forge/ cannot be used;
a state file that is a symlink, not a regular file or not the user's own is never
opened but moved aside (move_aside), with its -wal/-shm.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from pathlib import Path

from forge_lsp.state.lock import LOCK_FILE

STATE_DIR = ".forge"
STATE_FILE = "state.sqlite3"
SIDE_FILES = ("-wal", "-shm", "-journal")


class UnsafeStateDir(OSError):
    """A .forge/ that is a symlink, not a folder, or not the user's own."""


def _own_dir(path: Path) -> bool:
    info = path.lstat()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def ensure_state_dir(root: Path) -> Path:
    """.forge/ in the workspace, with a .gitignore that keeps its state (not the user's files there) out of git.

    UnsafeStateDir when .forge is a symlink (it may point out of the
    workspace), not a folder, or not the user's own.
    """
    folder = root / STATE_DIR
    with contextlib.suppress(FileExistsError):
        folder.mkdir(parents=True)
    if not _own_dir(folder):
        raise UnsafeStateDir(f"{folder} is a symlink, not a folder, or not owned by you; it is not used")
    _write_gitignore(folder / ".gitignore")
    return folder


GITIGNORE = "\n".join(
    [
        "# Written by forge-lsp: its state stays out of git. Anything else you keep in .forge/",
        "# (templates/, a scripted model's script, AGENTS.md) can be committed.",
        f"/{STATE_FILE}",
        *(f"/{STATE_FILE}{side}" for side in SIDE_FILES),
        f"/{STATE_FILE}.*",
        "/transcripts/",
        f"/{LOCK_FILE}",
        "",
    ]
)
"""What .forge/.gitignore says: the state file, its side files and moved-aside copies, transcripts, the turn lock."""

OLD_GITIGNORES = ("*\n",)
"""What forge-lsp wrote there before ('*' kept templates and scripts out of git too): rewritten as GITIGNORE.
Any other content is the user's (or edited by the user) and is left as it is."""


def _write_gitignore(ignore: Path) -> None:
    """.forge/.gitignore, unless one of the user's own is there: only forge-lsp's own older one is rewritten."""
    try:
        info = ignore.lstat()
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError), ignore.open("x", encoding="utf-8") as f:
            f.write(GITIGNORE)
        return
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > 64:
        return
    if ignore.read_text(encoding="utf-8", errors="replace") not in OLD_GITIGNORES:
        return
    fresh = ignore.with_name(f".gitignore.{os.getpid()}.tmp")
    fresh.write_text(GITIGNORE, encoding="utf-8")
    os.replace(fresh, ignore)


def user_state_dir(root: Path) -> Path:
    """Where a workspace's state lives when its .forge/ cannot be used: the user's state folder."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "forge-lsp" / "workspaces"
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    folder = base / f"{root.name or 'root'}-{key}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not _own_dir(folder):
        raise UnsafeStateDir(f"{folder} is not a folder owned by you")
    return folder


def _unsafe_file(path: Path) -> str | None:
    """Why a state file (or its -wal/-shm) must not be opened, or None."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return "it is a symlink"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.getuid():
        return f"it belongs to uid {info.st_uid}, not to you (uid {os.getuid()})"
    return None


def _aside_name(path: Path, why: str) -> Path:
    """<name>.<why>-<timestamp>, a name no file (or side file of one) has yet."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while any(os.path.lexists(target.with_name(target.name + s)) for s in ("", *SIDE_FILES)):
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    return target


def move_aside(path: Path, why: str) -> Path:
    """Rename a state file (and its -wal/-shm) to <name>.<why>-<timestamp>; returns the new name."""
    target = _aside_name(path, why)
    # rename never follows a symlink: the link itself moves, whatever it points to.
    os.rename(path, target)
    for side in SIDE_FILES:
        extra = path.with_name(path.name + side)
        if extra.exists() or extra.is_symlink():
            os.rename(extra, target.with_name(target.name + side))
    return target


def set_aside(path: Path, sides: list[str], why: str) -> list[Path]:
    """Rename some side files of a state file (its -wal, -journal) to <name>.<why>-<timestamp><side>,
    leaving the file itself in place; returns their new names."""
    target = _aside_name(path, why)
    moved = []
    for side in sides:
        os.rename(path.with_name(path.name + side), target.with_name(target.name + side))
        moved.append(target.with_name(target.name + side))
    return moved


def stored_state_file(root: Path) -> Path | None:
    """The workspace's existing state file, in .forge/ or in the user's fallback folder
    (user_state_dir), or None when nothing is stored; it creates no folder."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "forge-lsp" / "workspaces"
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    for path in (root / STATE_DIR / STATE_FILE, base / f"{root.name or 'root'}-{key}" / STATE_FILE):
        with contextlib.suppress(OSError):
            if path.is_file():
                return path
    return None
