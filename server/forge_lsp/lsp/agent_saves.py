"""The agent's edit to a document open in the editor reaches the disk before the turn's next tool call.

An edit goes to the editor's buffer through workspace/applyEdit; the commands the agent runs next
(a test, a build) read the disk. So once the client applied it, the file on disk is made to hold
the new text when that loses nothing, which is when the buffer held what the disk holds before the
edit (no unsaved change of the user's, no change on disk the editor has not read yet):

- a client that says it can (experimental capability ``forge.saveDocuments``: the VS Code extension,
  the Neovim plugin) is asked to save the document itself (``forge/saveDocuments``), once it has
  reported the edit (didChange) and only at that version: its buffer is left unmodified, with no
  "changed on disk" warning, and the editor's undo still takes the edit back;
- any other client: the server writes the same text to the disk atomically.

A buffer with the user's own unsaved changes is never saved for them: the edit stays in the
buffer, and the model (in that tool's result) and the user (once) are told that commands see the
version on disk.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from forge_lsp.tools.base import ENCODING_ERRORS, write_atomic

if TYPE_CHECKING:
    from forge_lsp.lsp.language_server import ForgeLanguageServer

log = logging.getLogger(__name__)

SAVE_DOCUMENTS = "forge/saveDocuments"
"""Server to client: {documents: [{uri, version}]} -> [{saved, reason?}] (one per document, in order): save
each document if it is at that version still (the user typed nothing since the edit)."""
REPORT_SECS = 5.0
"""How long the server waits for the client to report an applied edit (Neovim sends it up to 150 ms later; a
loaded machine may take longer). Only an edit the user typed over, or a client that never reports, waits it out."""
SAVE_SECS = 10.0
"""How long a save may take (VS Code runs the user's format-on-save first)."""
CHANGED_SINCE = "you changed it since"
"""The reason a client gives for not applying (workspace/applyEdit) or not saving (forge/saveDocuments) an edit
because the user changed the document after the server made it: the same words in both answers."""
MAX_COMPARED_BYTES = 64 * 1024 * 1024

UNSAVED = (
    "Note: {rel} has unsaved changes in the editor, so this edit was made in the editor's buffer and not saved: "
    "commands (shell, tests) see the version on disk until the user saves it."
)
NOT_SAVED = (
    "Note: the editor could not save {rel} ({reason}), so this edit is in the editor's buffer only: "
    "commands (shell, tests) see the version on disk."
)
REFORMATTED = "Note: saving {rel} in the editor changed its text (the user's format-on-save): read it again before patching it."
TELL_USER = (
    "Forge: {rel} has unsaved changes of yours, so the agent's edit stays in the buffer: "
    "its commands see the file on disk until you save"
)


def can_save(caps: t.ClientCapabilities | None) -> bool:
    """Whether the client implements forge/saveDocuments (experimental: {forge: {saveDocuments: true}})."""
    experimental = caps.experimental if caps is not None else None
    forge = experimental.get("forge") if isinstance(experimental, Mapping) else None
    return isinstance(forge, Mapping) and forge.get("saveDocuments") is True


def _plain(text: str) -> str:
    """Text as compared with the disk: an editor may hide a byte order mark and add a final line ending on save."""
    text = text.removeprefix("\ufeff")
    for ending in ("\r\n", "\n", "\r"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text


def text_digest(text: str) -> bytes:
    """A digest of text as compared with the disk (same_text's equality: a BOM and one final line ending do not count)."""
    return hashlib.blake2b(_plain(text).encode("utf-8", ENCODING_ERRORS), digest_size=16).digest()


def same_text(a: str | None, b: str | None) -> bool:
    """Whether two texts are the same file (a BOM and one final line ending do not count)."""
    return a is not None and b is not None and _plain(a) == _plain(b)


def disk_text(path: Path) -> str | None:
    """The file's text (bytes that are not UTF-8 kept as in tools.base), or None: missing, not a file, too large."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_COMPARED_BYTES:
            return None
        return path.read_bytes().decode("utf-8", ENCODING_ERRORS)
    except OSError:
        return None


async def on_disk(path: Path, text: str) -> bool:
    """Whether the disk holds text (read in a thread: a slow file system never stalls the server)."""
    return same_text(await asyncio.to_thread(disk_text, path), text)


class AgentSaves:
    """Puts an applied edit on the disk (see the module's docstring); one per language server."""

    def __init__(self, server: ForgeLanguageServer) -> None:
        self.server = server
        self._told: set[str] = set()
        """Documents whose user was told their unsaved buffer got an edit (once, until they are clean again)."""

    def _document(self, uri: str) -> Any:
        return self.server.workspace.text_documents.get(uri)

    async def clean(self, path: Path, buffer: str) -> bool:
        """Whether a document's buffer holds what the disk holds (saving it loses nothing): the same text, or
        an empty buffer of a file not on disk yet (a new file the user opened and typed nothing into)."""
        text = await asyncio.to_thread(disk_text, path)
        if text is None:
            return _plain(buffer) == "" and not await asyncio.to_thread(path.exists)  # Neovim's empty buffer is "\n"
        return same_text(buffer, text)

    async def reported(self, uri: str, content: str) -> Any:
        """The document once the client reported an applied edit that makes it hold content (or opened it with
        that text), or None when its text is not that after REPORT_SECS (the user typed over it, or no report).

        Not the first change that comes: Neovim sends the first piece of an edit at once when its last report
        is older than its debounce, and the rest up to 150 ms later."""

        def holds() -> bool:
            now = self._document(uri)
            return now is not None and same_text(now.source, content)

        if await self.server.document_changes.until(uri, holds, REPORT_SECS):
            return self._document(uri)
        return None

    async def settle(
        self, path: Path, uri: str, rel: str, content: str, before: Any, version: int | None, clean: bool
    ) -> str | None:
        """After the client applied an edit that makes uri hold content (before: its document then, at
        version; None when it was not open; clean: the buffer held the disk's text): the disk gets content,
        or the note for the model saying why not."""
        if not clean:
            self._tell_user(uri, rel)
            return UNSAVED.format(rel=rel)
        self._told.discard(uri)
        if await on_disk(path, content):  # the client wrote it (Neovim writes a file it had not loaded)
            return None
        if not can_save(self.server.client_capabilities):
            await asyncio.to_thread(write_atomic, path, content)
            return None
        doc = await self.reported(uri, content)
        if doc is None:
            now = self._document(uri)
            if now is None and before is None:  # the client did not open it: nothing of the user's to keep
                await asyncio.to_thread(write_atomic, path, content)
                return None
            if now is not None and (now is not before or now.version != version):  # the user typed over it
                self._tell_user(uri, rel)
                return UNSAVED.format(rel=rel)
            log.warning("%s: the editor did not report the edit within %s s; not saved", rel, REPORT_SECS)
            return NOT_SAVED.format(rel=rel, reason="it did not report the edit")
        saved, reason = await self._save(uri, doc.version)
        if saved and await on_disk(path, content):
            return None
        if saved:
            return REFORMATTED.format(rel=rel)
        log.warning("%s: the editor did not save it: %s", rel, reason)
        if reason == CHANGED_SINCE:
            self._tell_user(uri, rel)
            return UNSAVED.format(rel=rel)
        return NOT_SAVED.format(rel=rel, reason=reason)

    async def _save(self, uri: str, version: int | None) -> tuple[bool, str]:
        """forge/saveDocuments for one document: (saved, why not)."""
        params = {"documents": [{"uri": uri, "version": version}]}
        try:
            async with asyncio.timeout(SAVE_SECS):
                answer = await self.server.protocol.send_request_async(SAVE_DOCUMENTS, params)
        except TimeoutError:
            return False, f"no answer in {SAVE_SECS:g} s"
        except Exception as exc:  # the client's error answer: its message is the reason
            return False, str(exc) or type(exc).__name__
        first = answer[0] if isinstance(answer, list) and answer else None
        if not isinstance(first, Mapping):
            return False, "it gave no answer for the document"
        reason = first.get("reason")
        return first.get("saved") is True, reason if isinstance(reason, str) and reason else "no reason given"

    def _tell_user(self, uri: str, rel: str) -> None:
        if uri in self._told:
            return
        self._told.add(uri)
        message = TELL_USER.format(rel=rel)
        self.server.log(message, t.MessageType.Warning)
        self.server.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))
