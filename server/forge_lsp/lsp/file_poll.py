"""The config files, checked on disk every POLL_SECS: the user's always (no editor watches them), a
workspace's where the editor does not watch them for the server (Neovim on Linux, 0.7).

Each round stats a small fixed set of paths (mtime, size, inode) and lists three folders' *.md;
nothing is read unless something changed. A change takes the path the editor's watcher takes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from lsprotocol import types as t

from forge_lsp.lsp.language_server import ForgeLanguageServer

POLL_SECS = 2.0
USER = "user"

Signature = tuple[int, int, int] | None
Snapshot = dict[Path, Signature]


def signature(path: Path | str) -> Signature:
    """What tells a file's change without reading it; None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def snapshot(files: list[Path], folders: list[Path]) -> Snapshot:
    """files (present or not) and the *.md files of folders, each with its signature."""
    found: Snapshot = {path: signature(path) for path in files}
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                names = [entry.path for entry in entries if entry.name.endswith(".md")]
        except OSError:  # no such folder: nothing in it
            continue
        found.update((Path(name), signature(name)) for name in names)
    return found


def changes(old: Snapshot, new: Snapshot) -> list[tuple[Path, t.FileChangeType]]:
    """The files that differ between two snapshots, and how (as a watcher reports them)."""
    found = []
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before != after:
            kind = (
                t.FileChangeType.Changed if before and after else t.FileChangeType.Deleted if before else t.FileChangeType.Created
            )
            found.append((path, kind))
    return found


class FilePoll:
    """The watched files' last signatures; round() reports what changed since."""

    def __init__(
        self,
        ls: ForgeLanguageServer,
        workspaces: bool,
        on_workspace: Callable[[ForgeLanguageServer, t.DidChangeWatchedFilesParams], None],
        on_user: Callable[[ForgeLanguageServer], None],
    ) -> None:
        self.ls = ls
        self.workspaces = workspaces
        """Whether the workspaces' files are polled too (the editor does not watch them)."""
        self.on_workspace = on_workspace
        self.on_user = on_user
        self.seen: dict[str | Path, Snapshot] = {}

    def groups(self) -> Iterator[tuple[str | Path, Snapshot]]:
        """("user", the user's files) once, then (root, its files) per workspace when polled."""
        runtimes = list(self.ls.workspaces)
        for runtime in runtimes[:1]:  # every runtime of the server reads the same user's files
            yield USER, snapshot(*runtime.user_files())
        if self.workspaces:
            for runtime in runtimes:
                yield runtime.root, snapshot(*runtime.workspace_files())

    def round(self) -> None:
        """One check: a group seen for the first time is only noted; a changed one is reloaded."""
        seen: dict[str | Path, Snapshot] = {}
        for key, now in self.groups():
            seen[key] = now
            before = self.seen.get(key)
            changed = changes(before, now) if before is not None else []
            if not changed:
                continue
            self.ls.log(f"config: {', '.join(str(path) for path, _ in changed)} changed on disk; read again")
            if key == USER:
                self.on_user(self.ls)
            else:
                events = [t.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changed]
                self.on_workspace(self.ls, t.DidChangeWatchedFilesParams(changes=events))
        self.seen = seen

    async def run(self) -> None:
        """A round every POLL_SECS until cancelled (shutdown); a failing round is logged, never fatal."""
        while True:
            await asyncio.sleep(POLL_SECS)
            try:
                self.round()
            except Exception as exc:
                self.ls.log(f"checking the config files failed: {exc}", t.MessageType.Warning)
