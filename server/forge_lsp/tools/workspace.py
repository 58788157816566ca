"""The workspace sandbox: every path a tool touches must resolve inside the root."""

from __future__ import annotations

from pathlib import Path

from forge_lsp.tools import gitrepos


class PathOutsideWorkspace(Exception):
    """A path that resolves outside the workspace root."""


GIT_EXECUTES = frozenset({"config", "config.worktree", "commondir", "gitdir"})
"""Names in a .git folder (or a git directory inside it) that git reads to find programs to run, or
the folder whose config to read."""


def git_executes(rel: Path) -> str | None:
    """Why a workspace path (relative, symlinks resolved) is one git would execute from, or None.

    A .git file (a worktree's or a submodule's pointer), anything under a `hooks` folder of a .git
    folder, and config, config.worktree, commondir, gitdir in one (submodules' .git/modules/*
    included). Compared case-insensitively: on macOS .GIT/CONFIG is .git/config.
    """
    parts = [p.lower() for p in rel.parts]
    if ".git" not in parts:
        return None
    at = parts.index(".git")
    inside = parts[at + 1 :]
    if not inside:
        return "a .git entry tells git where the repository is (a .git file names another git directory)"
    if "hooks" in inside[:-1]:
        return "git runs its hooks on the next commit, checkout or push"
    if inside[-1] in GIT_EXECUTES:
        return "git runs the programs it names (core.fsmonitor, core.sshCommand, ...) or reads the config of the folder it names"
    return None


class GitExecutes(Exception):
    """A path git executes from (.git/config, .git/hooks/*, a .git file): the file tools refuse it."""


class Workspace:
    """A workspace root and the rule that confines tools to it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, raw: object) -> Path:
        """The absolute path for a tool argument, or PathOutsideWorkspace.

        Relative paths are taken from the root; absolute ones must lie inside
        it; symlinks are followed, so a link that points out is refused too.
        """
        if not isinstance(raw, str) or not raw.strip():
            raise PathOutsideWorkspace("path must be a non-empty string")
        if "\0" in raw:
            raise PathOutsideWorkspace("path contains a NUL byte")
        candidate = Path(raw.strip())
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # symlink loops
            raise PathOutsideWorkspace(f"cannot resolve {raw!r}: {exc}") from None
        if real != self.root and not real.is_relative_to(self.root):
            raise PathOutsideWorkspace(f"{raw!r} is outside the workspace root {self.root}")
        return real

    def check_changeable(self, path: Path) -> None:
        """GitExecutes for a file git executes from: the file tools never change it, in any workspace."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return
        why = git_executes(rel)
        if why is None and gitrepos.executes_from(self.root, path):
            why = "a .git entry of the workspace (or a link in one) leads to it: git runs what it names, or its hooks"
        if why is not None:
            raise GitExecutes(
                f"refusing to change {rel.as_posix()}: {why}, outside any sandbox; a file tool never changes it "
                "(the user can, with git config or by hand)"
            )

    def relative(self, path: Path) -> str:
        """A path for people and the model: relative to the root."""
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(path)
