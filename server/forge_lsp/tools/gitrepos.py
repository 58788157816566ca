"""The git repositories of a workspace and the files in them that git executes from.

The workspace's own .git, the nested ones (a submodule's .git file, a clone inside the tree:
found breadth first within MAX_WALK_DIRS folders, and every path .gitmodules names), and the git
directories inside a .git folder (.git/modules/*, .git/worktrees/*). A .git that is a link, a .git
file, or a config that is a link, is followed when it leads inside the workspace: what git reads
is its target. The sandbox keeps all of it from being changed or replaced; the file tools refuse it.

A sandboxed command may have made any of these files (a FIFO .gitmodules, a sparse .git file of
gigabytes, a commondir linked to a device), and they are read before every file tool's write and after
every sandboxed command: each is read only when it is a regular file inside the workspace, at most its
first few kilobytes, and never in a way that can block (see _head).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import subprocess
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

MAX_GITMODULES_BYTES = 100_000
"""What is read of .gitmodules (the paths it names, for repositories deeper than the walk)."""
MAX_POINTER_BYTES = 4096
"""What is read of a .git file ("gitdir: PATH") or a commondir file (a path)."""

RUNS_KEY = re.compile(
    r"""^(core\.(fsmonitor|hookspath|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand|worktree)
    |sequence\.editor|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver|(merge|diff)tool\..+\.(cmd|path)
    |filter\..+\.(clean|smudge|process)|credential\.(.+\.)?helper|gpg\.(.+\.)?program|pager\..+
    |include\.path|includeif\..+\.path|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)
    |protocol\.(.+\.)?allow|hook\..+|interactive\.difffilter|trailer\..+\.(command|cmd)|sendemail\..+
    |web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path))$""",
    re.VERBOSE,
)
"""Config keys (lower-cased) whose value git runs as a program, or that point git at another config or
transport that would: what a repository a sandboxed command made may not keep."""


def _gitmodules_paths(text: str) -> list[str]:
    """The values of .gitmodules' `path = ...` lines, read line by line: a pattern over the whole text (blank
    lines, then a path padded with spaces) went quadratic, and it runs before every file tool's write."""
    out = []
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip() == "path" and value.strip():
            out.append(value.strip())
    return out


def _inside(ws: Path, path: Path) -> bool:
    return path == ws or ws in path.parents


def _head(ws: Path, path: Path, limit: int) -> str | None:
    """The first limit bytes of path as text, when it is (links followed) a regular file inside ws; else None.

    Never blocks: the type is checked before the open (a FIFO or a device is never opened), the open is
    non-blocking, and the type is checked again on the descriptor (a FIFO swapped in between is caught);
    never more than limit bytes are read, whatever size the file says it has (a sparse file of gigabytes)."""
    try:
        real = path.resolve()
        if not _inside(ws, real) or not stat.S_ISREG(os.stat(real).st_mode):
            return None
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (OSError, RuntimeError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


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
    listed = _gitmodules_paths(_head(ws, ws / ".gitmodules", MAX_GITMODULES_BYTES) or "")
    for rel in listed:
        dotgit = ws / rel.strip("\"'") / ".git"
        if _inside(ws, dotgit.parent.resolve()) and os.path.lexists(dotgit) and dotgit not in found:
            found.append(dotgit)
    return found[:MAX_GIT_DIRS]


def _leads_to(entry: Path, ws: Path) -> Path | None:
    """The git directory a .git entry leads to (a folder: itself; a link: its target; a file: the
    gitdir it names), resolved, when it is a folder inside the workspace; else None."""
    try:
        if entry.is_file() and not entry.is_symlink():
            text = _head(ws, entry, MAX_POINTER_BYTES) or ""
            if not text.startswith("gitdir:"):
                return None
            target = (entry.parent / text[len("gitdir:") :].partition("\n")[0].strip()).resolve()
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


def _runs(name: str, value: str) -> bool:
    """Whether a config entry makes git run a program (or read one elsewhere) when the user uses the repository."""
    return (
        bool(RUNS_KEY.match(name))
        or value.startswith("ext::")
        or ((name.startswith("alias.") or (name.startswith("submodule.") and name.endswith(".update"))) and value.startswith("!"))
    )


def _git_config(path: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """`git config --file path ARGS`: that file alone, no include followed, nothing of the user's read."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}
    try:
        return subprocess.run([git, "config", "--file", str(path), *args], capture_output=True, timeout=10, env=env)
    except (OSError, subprocess.SubprocessError):
        return None


def _config_entries(path: Path) -> list[tuple[str, str]] | None:
    """A config file's entries (names lower-cased) as git itself reads them (its own parser: no second
    guess); None when git cannot read it or is not there."""
    done = _git_config(path, "--list", "-z")
    if done is None or done.returncode != 0:
        return None
    out = []
    for item in done.stdout.decode("utf-8", "replace").split("\0"):
        if item:
            name, _, value = item.partition("\n")
            out.append((name.lower(), value))
    return out


def disarm(gitdir: Path, keep_commondir: set[Path]) -> list[str]:
    """Take out of a git directory a sandboxed command made what git would run later: config entries that
    name a program (the file whole when git cannot read it), hooks other than git's own *.sample, and a
    commondir that does not lead to one of keep_commondir. Returns what was taken, relative to gitdir."""
    taken: list[str] = []
    for name in ("config", "config.worktree"):
        path = gitdir / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            _remove(path)
            taken.append(name)
            continue
        if not path.is_file():
            continue
        entries = _config_entries(path)
        runs = sorted({key for key, value in entries or [] if _runs(key, value)})
        for key in runs:
            _git_config(path, "--unset-all", key)
            taken.append(f"{name} {key}")
        left = _config_entries(path) if runs else entries
        if left is None or any(_runs(key, value) for key, value in left):
            _remove(path)  # git cannot read it, or what could not be unset key by key: the file goes whole
            taken.append(name)
    hooks = gitdir / "hooks"
    if hooks.is_symlink() or (hooks.exists() and not hooks.is_dir()):
        _remove(hooks)
        taken.append("hooks")
    elif hooks.is_dir():
        for hook in sorted(hooks.iterdir()):
            if not (hook.name.endswith(".sample") and hook.is_file() and not hook.is_symlink()):
                _remove(hook)
                taken.append(f"hooks/{hook.name}")
    commondir = gitdir / "commondir"
    if os.path.lexists(commondir):
        text = _head(gitdir, commondir, MAX_POINTER_BYTES) if not commondir.is_symlink() else None
        try:
            common = (gitdir / text.strip()).resolve() if text and text.strip() else None
        except (OSError, RuntimeError, ValueError):
            common = None
        if common not in keep_commondir or commondir.is_symlink():
            _remove(commondir)
            taken.append("commondir")
    return taken


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError as exc:
        log.warning("could not remove %s, which a sandboxed command made: %s", path, exc)
