"""Which saves of a trust-relevant file (.forge.toml, a template, the scripted script) are the user's own.

A user who edits their trusted workspace's .forge.toml in the editor and saves it keeps the trust
(the server records it again); any other change asks again. A buffer's text is not the user's when
the agent put it there (a write or patch through workspace/applyEdit), or when the editor took it
from the disk after something else changed the file (a git pull, a script, the agent's shell: the
buffer reloaded, then saved by a reflexive :w). Neither mark goes away by editing on top of it;
the agent's stays until the document closes, the disk's until the buffer is the trusted text again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from forge_lsp.textfile import Unusable, read_text

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

SAVE_FLUSH_SECS = 0.5
"""An editor sends the last didChange of a buffer as it saves it (Neovim flushes it after writing):
a buffer that matched the disk this long before the didSave is the save itself, not a reload.

Only the last change can be the save's flush: once the document has a later version (the user typed
after an editor such as VS Code took an outside change into the buffer as a didChange), it was a
reload, however soon the save comes. The window stays for what the protocol cannot tell apart: a
didChange that matches the disk followed by didSave with nothing between is Neovim's own save, or a
reload (VS Code) saved untouched within the window; the window bounds that second case."""
MAX_COMPARED_BYTES = 1024 * 1024


def disk_text(path: Path) -> str | None:
    """The file's text as an editor would show it, or None (missing, too large, not UTF-8, not a regular file:
    a FIFO in its place is never opened for reading, which would block the server)."""
    try:
        return read_text(path, MAX_COMPARED_BYTES)
    except (OSError, Unusable):
        return None


class UserSaves:
    """The open trust-relevant documents whose text is not (all) the user's."""

    def __init__(self) -> None:
        self.agent_edited: set[str] = set()
        """Documents the agent changed through workspace/applyEdit (until they close)."""
        self.from_disk: dict[str, tuple[float, int | None]] = {}
        """Documents whose buffer took an untrusted text from the disk: when, and at which version."""

    def agent_edit(self, uri: str) -> None:
        """The agent is about to change the open document uri in the editor."""
        self.agent_edited.add(uri)

    def closed(self, uri: str) -> None:
        self.agent_edited.discard(uri)
        self.from_disk.pop(uri, None)

    def buffer_changed(
        self,
        runtime: WorkspaceRuntime,
        rel: str,
        uri: str,
        path: Path,
        text: str,
        opened: bool = False,
        version: int | None = None,
    ) -> None:
        """didOpen (opened) / didChange of a trust-relevant document: where its text came from.

        A document opened with an untrusted text read it from the disk: a save of it is never the user's
        own, however soon. Whether the disk holds that text now does not matter: the editor may be writing
        it (Neovim reloads a changed file as didClose + didOpen, then a :w renames or truncates the file
        while the server reads it). Only an empty document of a file not on the disk is the user's to fill.
        A change to the disk's text may be the save itself, when it is the document's last (version) and
        the save comes within SAVE_FLUSH_SECS."""
        if runtime.is_trusted_text(rel, text):
            self.from_disk.pop(uri, None)
        elif opened and (text or disk_text(path) is not None):
            self.from_disk[uri] = (float("-inf"), version)
        elif uri not in self.from_disk and text == disk_text(path):
            self.from_disk[uri] = (time.monotonic(), version)

    def is_users(self, uri: str, version: int | None = None) -> bool:
        """Whether a save of uri, its document now at version, is the user's own text (see the module's docstring)."""
        if uri in self.agent_edited:
            return False
        found = self.from_disk.get(uri)
        if found is None:
            return True
        since, at = found
        return at == version and time.monotonic() - since < SAVE_FLUSH_SECS
