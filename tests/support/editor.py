"""An editor as the pytest-lsp client plays it: documents with versions, workspace/applyEdit applied to the
buffer and reported by a didChange (later, like Neovim's debounce, when told), and forge/saveDocuments,
forge/reloadDocuments and forge/diagnostics answered as the Neovim plugin and the VS Code extension do (when the
client says it can)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from support.textedits import apply


def _plain(value: Any) -> Any:
    """A request's params as JSON data (pygls gives a method it does not know as named tuples)."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass
class Buffer:
    """One open document: its text and version as the editor has them, and whether it differs from the disk."""

    path: Path
    text: str
    version: int = 1
    reported: int = 1
    """The last version the server was sent."""
    modified: bool = False


@dataclass
class FakeEditor:
    """Applies the server's edits to its buffers and reports them as an editor does."""

    client: LanguageClient
    report_ms: int = 0
    """How long after an edit its didChange goes (Neovim: up to 150 ms)."""
    buffers: dict[str, Buffer] = field(default_factory=dict)
    saves: list[dict[str, Any]] = field(default_factory=list)
    """Each forge/saveDocuments request's documents, in order."""
    on_save: Any = None
    """Called with (buffer) before a save writes it (a format-on-save changing the text)."""
    user_types: str | None = None
    """Typed into the edited document right after the next edit, in the same report (then cleared)."""
    types_before_edit: Callable[[str], str] | None = None
    """What the user makes of the text of the next edit's document just before the edit arrives (typing while
    the server made it), reported as an edit is (report_ms): the edit, made for the version before, is refused
    (then cleared)."""
    says_why: bool = True
    """A refused edit comes with its reason, as the Neovim plugin answers; False: as vscode-languageclient
    answers a version mismatch (applied false, no reason)."""
    types_after_save: str | None = None
    """Typed into the document right after the next save (forge/saveDocuments), in a change of its own."""
    reloads: list[dict[str, Any]] = field(default_factory=list)
    """Each forge/reloadDocuments request's documents, in order."""
    reopens: bool = True
    """A reload is reported as Neovim does (didClose + didOpen at version 0); False: as VS Code does (didChange)."""
    types_during_command: str | None = None
    """Typed into the first open document when the server next asks to reload (the user typing while the
    command ran: reported after the reload request was made, before it is answered)."""
    in_pieces: bool = False
    """An edit of several TextEdits is reported in two didChanges: its last TextEdit at once, the rest
    report_ms later (Neovim sends the first change at once when its last report is older than its debounce)."""
    lint: Callable[[Path, str], list[dict[str, Any]]] | None = None
    """The editor's own language server: a document's diagnostics from its text (forge/diagnostics answers them)."""
    diagnostics_asked: list[dict[str, Any]] = field(default_factory=list)
    """Each forge/diagnostics request's params, in order."""
    diagnostics_answer: Any = None
    """What forge/diagnostics answers instead of the lint (a client's wrong answer); None: the lint's."""
    hidden: list[Path] = field(default_factory=list)
    """The files forge/diagnostics opened without showing them (they were not open)."""

    def open(self, path: Path, text: str | None = None, disk: str | None = None) -> Buffer:
        """path opened; text: the buffer's (default: the disk's); disk: written first (default: text)."""
        if disk is not None or not path.exists():
            path.write_bytes((disk if disk is not None else text or "").encode())
        on_disk = path.read_bytes().decode()
        buf = Buffer(path, on_disk if text is None else text, modified=text is not None and text != on_disk)
        self.buffers[path.as_uri()] = buf
        self.client.text_document_did_open(
            t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(path.as_uri(), "python", buf.version, buf.text))
        )
        return buf

    def type(self, path: Path, text: str) -> None:
        """The user changes the buffer (reported at once)."""
        buf = self.buffers[path.as_uri()]
        buf.text, buf.modified = text, True
        buf.version += 1
        self._report(buf)

    def _report(self, buf: Buffer) -> None:
        if buf.reported == buf.version:
            return
        buf.reported = buf.version
        change = t.TextDocumentContentChangeWholeDocument(text=buf.text)
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=buf.path.as_uri(), version=buf.version),
                content_changes=[change],
            )
        )

    def apply_edit(self, params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        """workspace/applyEdit: the buffers' TextDocumentEdits (versions checked as VS Code's client does)."""
        changed: list[Buffer] = []
        for change in params.edit.document_changes or []:
            if not isinstance(change, t.TextDocumentEdit):
                continue
            buf = self.buffers.get(change.text_document.uri)
            if buf is not None and self.types_before_edit is not None:
                typing, self.types_before_edit = self.types_before_edit, None
                buf.text, buf.modified, buf.version = typing(buf.text), True, buf.version + 1
                self._report_as_edit(buf)
            if buf is None:
                path = Path(unquote(urlparse(change.text_document.uri).path))
                path.write_text(apply(path.read_text() if path.exists() else "", list(change.edits)))
                continue
            if change.text_document.version is not None and change.text_document.version != buf.version:
                return t.ApplyWorkspaceEditResult(applied=False, failure_reason="you changed it since" if self.says_why else None)
            if self.in_pieces and len(change.edits) > 1:
                buf.text = apply(buf.text, [change.edits[-1]])  # the later edit first: the others' ranges hold
                buf.version += 1
                self._report(buf)
                buf.text = apply(buf.text, list(change.edits[:-1]))
            else:
                buf.text = apply(buf.text, list(change.edits))
            buf.version += 1
            buf.modified = True
            changed.append(buf)
        if self.user_types is not None and changed:
            changed[0].text += self.user_types
            changed[0].version += 1
            self.user_types = None
        for buf in changed:
            self._report_as_edit(buf)

        return t.ApplyWorkspaceEditResult(applied=True)

    def _report_as_edit(self, buf: Buffer) -> None:
        """buf's change reported as an edit's is: report_ms later (Neovim's debounce), or at once."""
        if self.report_ms:
            asyncio.get_running_loop().call_later(self.report_ms / 1000, self._report, buf)
        else:
            self._report(buf)

    def reload_documents(self, params: Any) -> list[dict[str, Any]]:
        """forge/reloadDocuments: each document read again from the disk when it is at the version asked and
        not modified (else not, and why), its new text reported before the answer."""
        documents = params["documents"] if isinstance(params, dict) else params.documents
        if self.types_during_command is not None:
            typed, self.types_during_command = self.types_during_command, None
            first = next(iter(self.buffers.values()))
            self.type(first.path, first.text + typed)
        answers: list[dict[str, Any]] = []
        for doc in documents:
            uri, version = (doc["uri"], doc["version"]) if isinstance(doc, dict) else (doc.uri, doc.version)
            self.reloads.append({"uri": uri, "version": version})
            buf = self.buffers.get(uri)
            if buf is None:
                answers.append({"reloaded": False, "reason": "not open"})
            elif buf.version != version:
                answers.append({"reloaded": False, "reason": "you changed it since"})
            elif buf.modified:
                answers.append({"reloaded": False, "reason": "it has unsaved changes"})
            elif not buf.path.is_file():
                answers.append({"reloaded": False, "reason": "the file is not on disk"})
            else:
                buf.text = buf.path.read_bytes().decode()
                if self.reopens:
                    self.client.text_document_did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(uri)))
                    buf.version = buf.reported = 0
                    item = t.TextDocumentItem(uri, "python", 0, buf.text)
                    self.client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=item))
                else:
                    buf.version += 1
                    self._report(buf)
                answers.append({"reloaded": True})
        return answers

    def save_documents(self, params: Any) -> list[dict[str, Any]]:
        """forge/saveDocuments: each document saved when it is at the version asked (else not, and why)."""
        documents = params["documents"] if isinstance(params, dict) else params.documents
        answers: list[dict[str, Any]] = []
        for doc in documents:
            uri, version = (doc["uri"], doc["version"]) if isinstance(doc, dict) else (doc.uri, doc.version)
            self.saves.append({"uri": uri, "version": version})
            buf = self.buffers.get(uri)
            if buf is None:
                answers.append({"saved": False, "reason": "not open"})
                continue
            if buf.version != version:
                answers.append({"saved": False, "reason": "you changed it since"})
                continue
            if self.on_save is not None:
                self.on_save(buf)
                self._report(buf)
            buf.path.write_bytes(buf.text.encode())
            buf.modified = False
            self.client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri)))
            answers.append({"saved": True})
            if self.types_after_save is not None:
                typed, self.types_after_save = self.types_after_save, None
                asyncio.get_running_loop().call_soon(self.type, buf.path, buf.text + typed)
        return answers

    def diagnostics(self, params: Any) -> Any:
        """forge/diagnostics: each document's diagnostics from the lint (its buffer, or the disk for one not open,
        which the editor then opens without showing it), as current ones."""
        params = _plain(params)
        self.diagnostics_asked.append(params)
        if self.diagnostics_answer is not None:
            return self.diagnostics_answer
        answers: list[dict[str, Any]] = []
        for doc in params["documents"]:
            uri = doc["uri"]
            path = Path(unquote(urlparse(uri).path))
            buf = self.buffers.get(uri)
            if buf is None and path.is_file():
                self.hidden.append(path)
                buf = self.open(path)
            text = buf.text if buf is not None else ""
            found = self.lint(path, text) if self.lint is not None and buf is not None else []
            answers.append({"uri": uri, "diagnostics": found, "caughtUp": True})
        return answers
