"""The config files checked on disk (core/file_poll.py) for the language server: the user's and the trust
store always (no editor watches them), a workspace's where the editor does not watch them for the server
(Neovim on Linux, 0.7), and where it does, the trust-relevant files its watchers miss (a scripted model's
script, a script an agent names, a link's target).

A workspace file's change takes the path the editor's watcher takes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from pathlib import Path

from lsprotocol import types as t

from forge_lsp.core import file_poll
from forge_lsp.core.file_poll import TRUST, USER, Change, Group, config_groups
from forge_lsp.lsp.language_server import ForgeLanguageServer

KINDS: dict[Change, t.FileChangeType] = {
    "created": t.FileChangeType.Created,
    "changed": t.FileChangeType.Changed,
    "deleted": t.FileChangeType.Deleted,
}


class FilePoll(file_poll.FilePoll):
    """The watched files' last signatures; round() reloads what changed since."""

    def __init__(
        self,
        ls: ForgeLanguageServer,
        workspaces: bool,
        on_workspace: Callable[[ForgeLanguageServer, t.DidChangeWatchedFilesParams], None],
        on_user: Callable[[ForgeLanguageServer], None],
        on_trust: Callable[[ForgeLanguageServer], None],
    ) -> None:
        super().__init__(self.files, self.changed, self.failed)
        self.ls = ls
        self.workspaces = workspaces
        """Whether all of the workspaces' files are polled (the editor does not watch them); else only those its
        watchers miss (a scripted model's script, a link's target)."""
        self.on_workspace = on_workspace
        self.on_user = on_user
        self.on_trust = on_trust

    def files(self) -> Iterator[Group]:
        """The user's files and the trust store, then each workspace's (where the editor watches them, only what
        its watchers miss)."""
        return config_groups(list(self.ls.workspaces), client_watches=not self.workspaces)

    def changed(self, key: Hashable, changed: list[tuple[Path, Change]]) -> None:
        if key == TRUST:  # only a workspace whose trust it changes reads its config again
            self.on_trust(self.ls)
            return
        self.ls.log(f"config: {', '.join(str(path) for path, _ in changed)} changed on disk; read again")
        if key == USER:
            self.on_user(self.ls)
        else:
            events = [t.FileEvent(uri=path.as_uri(), type=KINDS[kind]) for path, kind in changed]
            self.on_workspace(self.ls, t.DidChangeWatchedFilesParams(changes=events))

    def failed(self, exc: Exception) -> None:
        self.ls.log(f"checking the config files failed: {exc}", t.MessageType.Warning)
