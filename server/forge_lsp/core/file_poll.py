"""The config files, checked on disk where nobody says they changed: no editor watches the user's files, some
clients watch none of a workspace's (Neovim on Linux, 0.7; every ACP client), and none watches every file trust
covers (a scripted model's script, one an agent names, a link's target).

Each round stats a small fixed set of paths (mtime, size, inode) and lists the definition folders' *.md;
nothing is read unless something changed. What a change means is the frontend's (on_change).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from forge_lsp.trust import client_watches as watched_by_client

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

log = logging.getLogger(__name__)

POLL_SECS = 2.0

Signature = tuple[int, int, int] | None
Snapshot = dict[Path, Signature]
Change = Literal["created", "changed", "deleted"]
Group = tuple[Hashable, Snapshot]
USER, TRUST = "user", "trust"
"""The keys of the user's own files' group and the trust store's (a workspace's group is keyed by its root)."""


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


def changes(old: Snapshot, new: Snapshot) -> list[tuple[Path, Change]]:
    """The files that differ between two snapshots, and how (as a watcher reports them)."""
    found: list[tuple[Path, Change]] = []
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before != after:
            found.append((path, "changed" if before and after else "deleted" if before else "created"))
    return found


def config_groups(runtimes: Sequence[WorkspaceRuntime], client_watches: bool = False) -> Iterator[Group]:
    """The config files of these runtimes as groups: (USER, the user's files) and (TRUST, the trust store) once
    (every runtime of a process reads the same user's), then (root, its files) per workspace: every file its
    trust covers and its definition folders, or where the client watches the workspace for the server only
    what its watchers do not report (a script, a link's target)."""
    for runtime in runtimes[:1]:
        yield USER, snapshot(*runtime.user_files())
        yield TRUST, snapshot([runtime.trust_store.path], [])
    for runtime in runtimes:
        files, folders = runtime.workspace_files()
        if client_watches:
            files, folders = [path for path in files if not watched_by_client(path, runtime.root)], []
        yield runtime.root, snapshot(files, folders)


class FilePoll:
    """Groups of files (each a key and its snapshot, from groups()) and their last signatures: round() calls
    on_change(key, what changed) for each group that changed since the last round."""

    def __init__(
        self,
        groups: Callable[[], Iterable[Group]],
        on_change: Callable[[Hashable, list[tuple[Path, Change]]], None],
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self.groups = groups
        self.on_change = on_change
        self.on_error = on_error or (lambda exc: log.warning("checking the config files failed: %s", exc))
        self.seen: dict[Hashable, Snapshot] = {}

    def round(self) -> None:
        """One check: a group seen for the first time is only noted; a changed one is reported."""
        seen: dict[Hashable, Snapshot] = {}
        for key, now in self.groups():
            seen[key] = now
            before = self.seen.get(key)
            changed = changes(before, now) if before is not None else []
            if changed:
                self.on_change(key, changed)
        self.seen = seen

    async def run(self, interval: float = POLL_SECS) -> None:
        """A round every interval seconds until cancelled (shutdown); a failing round is reported, never fatal."""
        while True:
            await asyncio.sleep(interval)
            try:
                self.round()
            except Exception as exc:
                self.on_error(exc)
