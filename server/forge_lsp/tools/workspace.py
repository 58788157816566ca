"""The workspace sandbox: every path a tool touches must resolve inside the root."""

from __future__ import annotations

from pathlib import Path


class PathOutsideWorkspace(Exception):
    """A path that resolves outside the workspace root."""


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

    def relative(self, path: Path) -> str:
        """A path for people and the model: relative to the root."""
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(path)
