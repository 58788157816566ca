"""A command's changes to files open in the editor: the editor's buffer follows the disk.

The shell, an MCP tool or a formatter the agent runs changes files on disk, not in the editor. After
such a call (tools.registry: a tool that may change files and names none), each document open in the
workspace whose file the call changed is looked at before the turn's next tool call:

- a buffer that held what the disk held before the call (no unsaved change of the user's) follows the
  disk: a client that says it can (experimental capability ``forge.reloadDocuments``: the Neovim plugin,
  the VS Code extension) is asked to reload it from disk (``forge/reloadDocuments``), and the server
  waits for its report of the new text; for any other client the server's view of the document is the
  disk's text until the client reports a change of it. Either way the next read or patch sees what the
  command left, and the document is not taken for one with unsaved changes;
- a buffer with the user's unsaved changes is never reloaded: the model is told, in that call's result,
  that the file changed on disk while the editor holds the user's changes (the user, once);
- a file the call removed: the model is told; the buffer stays (the server's view: no such file).

Cheap when nothing changed: one stat per open document before and after the call, and a document's
disk text is read only when its version or the file's stat changed since it was last compared.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from forge_lsp.lsp.agent_saves import CHANGED_SINCE, REPORT_SECS, disk_text, same_text, text_digest
from forge_lsp.lsp.language_server import uri_to_path
from forge_lsp.tools.base import Followed, signature

if TYPE_CHECKING:
    from forge_lsp.lsp.files import EditorFiles

log = logging.getLogger(__name__)

RELOAD_DOCUMENTS = "forge/reloadDocuments"
"""Server to client: {documents: [{uri, version}]} -> [{reloaded, reason?}] (one per document, in order): read
each document again from the disk if it is at that version still and has no unsaved changes, and report its
new text (didChange, or didClose + didOpen) before answering."""
RELOAD_SECS = 10.0
"""How long the client may take to answer (VS Code's answer waits for its own reload of the file)."""
UNSAVED_REASON = "it has unsaved changes"
"""The reason a client gives for not reloading a document whose buffer differs from the disk (Neovim's
'modified', VS Code's isDirty)."""
Signature = tuple[int, int, int] | None

KEPT = (
    "Note: {rel} changed on disk during this call, but the editor holds unsaved changes of the user's to it, so its "
    "buffer was not reloaded: read, patch and write see the buffer (the user's text, without this change); "
    "commands (shell, tests) see the disk."
)
REMOVED = (
    "Note: {rel} was removed from the disk during this call; the editor still has it open (its buffer is kept, not "
    "saved): read and patch find no such file, and a write creates it again."
)
REMOVED_KEPT = (
    "Note: {rel} was removed from the disk during this call, but the editor holds unsaved changes of the user's to "
    "it: read, patch and write see the buffer; commands (shell, tests) find no such file."
)
TELL_USER = (
    "Forge: {rel} changed on disk (the agent's {tool} call) while it has unsaved changes of yours: your buffer is kept as it is"
)


def can_reload(caps: t.ClientCapabilities | None) -> bool:
    """Whether the client implements forge/reloadDocuments (experimental: {forge: {reloadDocuments: true}})."""
    experimental = caps.experimental if caps is not None else None
    forge = experimental.get("forge") if isinstance(experimental, Mapping) else None
    return isinstance(forge, Mapping) and forge.get("reloadDocuments") is True


@dataclass(frozen=True)
class Seen:
    """One open document before a command: its text as the server sees it, and whether that was the disk's."""

    uri: str
    path: Path
    rel: str
    doc: Any
    version: int | None
    text: str
    signature: Signature
    clean: bool
    disk: bytes | None
    """A digest of the file's text (text_digest; None: missing or unreadable): a command that only touched the
    file of a buffer with unsaved changes is not said to have changed it."""


@dataclass(frozen=True)
class DiskView:
    """The server's view of a document whose buffer the client did not reload: the disk's text (None: removed),
    for as long as the document is the same one at the same version (the client reported nothing since)."""

    doc: Any
    version: int | None
    text: str | None


@dataclass(frozen=True)
class _Compared:
    """A document's text compared with the disk: at which version, against which stat of the file, and the result."""

    doc: Any
    version: int | None
    signature: Signature
    clean: bool
    disk: bytes | None


class OutsideChanges:
    """Open documents follow what a command changed on disk (see the module's docstring); one per EditorFiles."""

    def __init__(self, files: EditorFiles) -> None:
        self.files = files
        self.server = files.server
        self._compared: dict[str, _Compared] = {}
        self._views: dict[str, DiskView] = {}
        self._where: dict[str, tuple[Path, str] | None] = {}
        """Each document's path and workspace-relative path (None: not the workspace's), by URI: resolved once."""
        self._told: set[str] = set()
        """Documents whose user was told their unsaved buffer was kept (once, until they are clean again)."""

    def view(self, uri: str) -> DiskView | None:
        """The server's view of uri when it is the disk's and not the client's buffer (else None)."""
        found = self._views.get(uri)
        if found is None:
            return None
        doc = self.server.workspace.text_documents.get(uri)
        if doc is not found.doc or doc.version != found.version:
            del self._views[uri]  # the client reported a change (its reload, or typing): its text is the truth
            return None
        return found

    def _open(self) -> list[tuple[str, Path, str, Any]]:
        """The open documents of the workspace, (uri, path, rel, document), .forge/ left out (the server's own)."""
        found = []
        for uri, doc in list(self.server.workspace.text_documents.items()):
            if uri not in self._where:
                self._where[uri] = self._place(uri)
            where = self._where[uri]
            if where is not None:
                found.append((uri, where[0], where[1], doc))
        return found

    def _place(self, uri: str) -> tuple[Path, str] | None:
        """uri's path and its path relative to the root, or None: not a file of the workspace, or in .forge/."""
        if self.files.root is None or not uri.startswith("file:"):
            return None
        try:
            path = uri_to_path(uri)
            resolved = path.resolve()
            root = self.files.root.resolve()
        except (JsonRpcException, ValueError, OSError, RuntimeError):
            return None
        if not resolved.is_relative_to(root) or resolved.relative_to(root).parts[:1] == (".forge",):
            return None
        return path, resolved.relative_to(root).as_posix()

    async def before(self) -> dict[str, Seen]:
        """The open documents before a command: what after() compares with."""
        entries = []
        for uri, path, rel, doc in self._open():
            text = await self.files.view_text(path)  # waits for the report of an edit of the agent's
            doc = self.server.workspace.text_documents.get(uri)
            if text is None or doc is None:
                continue
            entries.append((uri, path, rel, doc, doc.version, text))
        if not entries:
            return {}
        seen = await asyncio.to_thread(self._compare, entries)
        for s in seen.values():
            self._compared[s.uri] = _Compared(s.doc, s.version, s.signature, s.clean, s.disk)
            if s.clean:
                self._told.discard(s.uri)
        return seen

    def _compare(self, entries: list[tuple[str, Path, str, Any, int | None, str]]) -> dict[str, Seen]:
        """Each document's stat, and whether its text is the disk's (read only when it or the file changed)."""
        seen: dict[str, Seen] = {}
        for uri, path, rel, doc, version, text in entries:
            now = signature(path)
            last = self._compared.get(uri)
            disk: bytes | None = None
            if last is not None and last.doc is doc and last.version == version and last.signature == now and now is not None:
                clean, disk = last.clean, last.disk
            elif now is not None:
                on_disk = disk_text(path)
                clean = same_text(text, on_disk)
                disk = text_digest(on_disk) if on_disk is not None else None
            else:  # a new file's empty buffer (Neovim's is "\n") holds nothing of the user's
                clean = text in ("", "\n", "\r\n")
            seen[uri] = Seen(uri, path, rel, doc, version, text, now, clean, disk)
        return seen

    async def after(self, seen: dict[str, Seen], tool: str) -> tuple[list[Followed], list[str]]:
        """After the command: the documents that follow the disk now, and the notes for the model."""
        if not seen:
            return [], []
        changed = await asyncio.to_thread(self._changed, list(seen.values()))
        followed: list[Followed] = []
        notes: list[str] = []
        to_reload: list[tuple[Seen, str]] = []
        for s, text in changed:
            removed = text is None
            if text is not None and (same_text(text, s.text) if s.clean else text_digest(text) == s.disk):
                continue  # touched, not changed
            doc = self.server.workspace.text_documents.get(s.uri)
            if not s.clean or doc is not s.doc or doc.version != s.version:  # the user's, or typed in meanwhile
                notes.append((REMOVED_KEPT if removed else KEPT).format(rel=s.rel))
                self._tell_user(s, tool)
                continue
            if removed:
                notes.append(REMOVED.format(rel=s.rel))
                self._views[s.uri] = DiskView(s.doc, s.version, None)
                followed.append(Followed(s.path, s.text, None))
                continue
            assert text is not None
            to_reload.append((s, text))
        if to_reload:
            reloaded = await self._reload(to_reload)
            for (s, text), (done, reason) in zip(to_reload, reloaded, strict=True):
                if not done and reason in (CHANGED_SINCE, UNSAVED_REASON):
                    notes.append(KEPT.format(rel=s.rel))
                    self._tell_user(s, tool)
                    continue
                if not done:
                    if reason:
                        log.warning("%s: the editor did not reload it: %s; the server reads it from the disk", s.rel, reason)
                    self._views[s.uri] = DiskView(s.doc, s.version, text)
                followed.append(Followed(s.path, s.text, text))
        return followed, notes

    def _changed(self, seen: list[Seen]) -> list[tuple[Seen, str | None]]:
        """The documents whose file changed by stat, with the disk's text now (None: removed). A file that
        cannot be compared now (not a regular file, over 64 MB, a link out of the workspace) is left out:
        nothing is followed."""
        out: list[tuple[Seen, str | None]] = []
        for s in seen:
            now = signature(s.path)
            if now == s.signature:
                continue
            if now is None:
                if not s.path.exists():
                    out.append((s, None))
                continue
            if self._place(s.uri) is None:
                # Now a link out of the workspace (or into .forge/): not the workspace's file, not read for it.
                log.warning("%s changed on disk into a link that leads out of the workspace; not read", s.rel)
                continue
            text = disk_text(s.path)
            if text is None:
                log.info("%s changed on disk and cannot be compared (not a regular file, or over 64 MB)", s.rel)
                continue
            out.append((s, text))
        return out

    async def _reload(self, docs: list[tuple[Seen, str]]) -> list[tuple[bool, str | None]]:
        """(reloaded and reported, why not) per document. A client that cannot reload: (False, None)."""
        if not can_reload(self.server.client_capabilities):
            return [(False, None)] * len(docs)
        params = {"documents": [{"uri": s.uri, "version": s.version} for s, _ in docs]}
        try:
            async with asyncio.timeout(RELOAD_SECS):
                answer = await self.server.protocol.send_request_async(RELOAD_DOCUMENTS, params)
        except TimeoutError:
            return [(False, f"no answer in {RELOAD_SECS:g} s")] * len(docs)
        except Exception as exc:  # the client's error answer: its message is the reason
            return [(False, str(exc) or type(exc).__name__)] * len(docs)
        answers = list(answer) if isinstance(answer, list) else []
        out: list[tuple[bool, str | None]] = []
        waits = []
        for i, (s, text) in enumerate(docs):
            one = answers[i] if i < len(answers) else None
            if not isinstance(one, Mapping):
                out.append((False, "it gave no answer for the document"))
            elif one.get("reloaded") is not True:
                reason = one.get("reason")
                out.append((False, reason if isinstance(reason, str) and reason else "no reason given"))
            else:
                out.append((True, None))
                waits.append((i, self._reported(s.uri, text)))
        for (i, _), ok in zip(waits, await asyncio.gather(*(w for _, w in waits)), strict=True):
            if not ok:
                out[i] = (False, f"it did not report the reloaded text within {REPORT_SECS:g} s")
        return out

    async def _reported(self, uri: str, text: str) -> bool:
        """Whether the client reports that the document holds text (its reload) within REPORT_SECS."""

        def holds() -> bool:
            doc = self.server.workspace.text_documents.get(uri)
            return doc is not None and same_text(doc.source, text)

        return await self.server.document_changes.until(uri, holds, REPORT_SECS)

    def _tell_user(self, s: Seen, tool: str) -> None:
        if s.uri in self._told:
            return
        self._told.add(s.uri)
        message = TELL_USER.format(rel=s.rel, tool=tool)
        self.server.log(message, t.MessageType.Warning)
        self.server.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))
