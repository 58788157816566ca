"""What every tool is made of: its definition, its context, its failures."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.tool_catalog import ToolFacts, ToolKind
from forge_lsp.tools import nearest
from forge_lsp.tools.process import Watch, unwatched
from forge_lsp.tools.workspace import GitExecutes, Workspace


class ToolFailure(Exception):
    """A tool call that failed; the message goes back to the model as the cause."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class FileMissing(ToolFailure):
    """A path that does not exist (ToolContext.missing adds the nearest ones that do)."""


class ChangedSince(ToolFailure):
    """A write the editor did not apply because the document changed after the edit was made (the user
    typed in it): nothing was written, and what the user wrote stands."""


class ChangedInReview(ChangedSince):
    """ChangedSince for an edit the user was asked to review (edit_review = "confirm"): not made again on their
    new text without asking them (tools/patch.py makes the others again)."""


@dataclass(frozen=True)
class ToolOutput:
    """A successful tool call's output; ``path`` is the workspace file it was about."""

    text: str
    path: str | None = None
    yields: bool = False
    """True when the turn must end after this call (followup asks the user)."""


class FileStore(Protocol):
    """Where file contents come from and go to (the disk, or the editor's buffers)."""

    async def read_text(self, path: Path) -> str | None:
        """The text of an open editor buffer for this path, or None to read the disk."""

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> str | None:
        """Write a whole file's new content (tool: the tool call making the change, for the user to see).

        Returns a note for the model when the change did not reach the disk (an editor's buffer holding
        unsaved changes of the user's keeps it), else None."""

    async def delete(self, path: Path, tool: str | None = None) -> None:
        """Remove a file."""

    async def before_command(self) -> object:
        """Before a call that may change any file (the shell, an MCP tool): what after_command compares with
        (the open documents as the editor and the disk have them)."""

    async def after_command(self, before: object, tool: str) -> tuple[list[Followed], list[str]]:
        """After that call (tool: its name): the open documents whose file it changed on disk, each now
        following the disk (the editor's buffer reloaded, or the store's view); and the notes for the model
        (a document whose unsaved changes were kept, a file removed under an open document)."""


@dataclass(frozen=True)
class Followed:
    """A document open in the editor, with no unsaved changes, whose file a command changed on disk: the
    buffer (or the store's view of it) now holds the disk's text."""

    path: Path
    before: str
    """Its text before the command (what the disk held)."""
    after: str | None
    """What the disk holds now; None: the command removed the file."""


@dataclass(frozen=True)
class CommandMark:
    """What ToolContext.command_ended compares with: the files the turn recorded, as stat saw them, and
    the FileStore's mark of its open documents."""

    recorded: dict[Path, tuple[int, int, int] | None]
    store: object


ENCODING_ERRORS = "surrogateescape"
"""Files are decoded and encoded with this: a byte that is not UTF-8 survives an edit around it, byte for byte."""


def for_display(text: str) -> str:
    """File text for people and the model: bytes that are not UTF-8 shown as U+FFFD."""
    return text.encode("utf-8", ENCODING_ERRORS).decode("utf-8", "replace")


def has_invalid_bytes(text: str) -> bool:
    """True when file text holds bytes that were not valid UTF-8 (kept as lone surrogates)."""
    return any("\udc80" <= c <= "\udcff" for c in text)


def check_text(value: str, what: str, rel: str | None = None) -> str:
    """A string from the model that will go into a file: it must be encodable UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolFailure(f"{what} holds a character that is not valid in UTF-8 text at {exc.start}", rel) from None
    return value


FILE_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
}


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    return FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(path: Path, rel: str, limit: int) -> str:
    """A regular file's text (blocking; run it in a thread). FIFOs, devices and sockets are refused unopened.

    A FIFO would block the open (and a read) forever, a device may never end:
    the type is checked before open, opened non-blocking, and checked again on
    the descriptor, so a file swapped in between is caught too.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileMissing(f"file not found: {rel}", rel) from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolFailure(f"{rel} is a directory, not a file", rel)
    if not stat.S_ISREG(info.st_mode):
        raise ToolFailure(f"{rel} is {kind_of(info.st_mode)}, not a regular file; only regular files can be read or edited", rel)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolFailure(f"{rel} is {kind_of(info.st_mode)}, not a regular file", rel)
        size = info.st_size
        if size > limit:
            raise ToolFailure(f"{rel} is {size} bytes, over the {limit}-byte limit (max_file_size_bytes)", rel)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ToolFailure(f"{rel} grew past the {limit}-byte limit (max_file_size_bytes) while being read", rel)
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{rel} is a binary file ({len(data)} bytes); it cannot be read as text", rel)
    return data.decode("utf-8", ENCODING_ERRORS)


def write_atomic(path: Path, content: str) -> None:
    """Write through a temporary file and rename, so no reader sees half a file (blocking: run it in a thread).

    Text read from a file that was not valid UTF-8 is written back with the
    same bytes (surrogateescape), so an edit never damages what it did not touch.
    """
    data = content.encode("utf-8", ENCODING_ERRORS)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file 0600: a file the agent edits keeps its mode, a new one gets what any
        # program's new file gets (0666 less the umask), or the user's own tools could not read it as usual.
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask, read without changing it (os.umask sets it, for every thread, while it reads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


class DiskFiles:
    """The plain FileStore: atomic writes to disk, off the event loop."""

    async def read_text(self, path: Path) -> str | None:
        return None

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> None:
        await asyncio.to_thread(write_atomic, path, content)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        await asyncio.to_thread(path.unlink)

    async def before_command(self) -> object:
        return None

    async def after_command(self, before: object, tool: str) -> tuple[list[Followed], list[str]]:
        return [], []  # no editor: nothing open to follow the disk


def signature(path: Path) -> tuple[int, int, int] | None:
    """What stat says of a file, to tell cheaply that it changed (size, mtime, inode); None: missing."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


@dataclass
class Snapshots:
    """Earlier contents of files the agent changed, newest last, for undo."""

    _stack: dict[Path, list[str | None]] = field(default_factory=dict)
    max_per_file: int = 20

    def save(self, path: Path, previous: str | None) -> None:
        """Remember what a file held (None: it did not exist) before a change."""
        stack = self._stack.setdefault(path, [])
        stack.append(previous)
        del stack[: -self.max_per_file]

    def pop(self, path: Path) -> str | None:
        """The content before the last change; ToolFailure when there is none."""
        stack = self._stack.get(path)
        if not stack:
            raise ToolFailure("nothing to undo for this path in this session")
        return stack.pop()


class ChangeLog(Protocol):
    """Told about every change a file tool makes, so a turn can be undone as a whole (core/turn_undo.py)."""

    def before(self, path: Path, previous: str | None) -> None:
        """path is about to change; previous is what it holds now (None: it does not exist)."""

    def after(self, path: Path, content: str | None) -> None:
        """path now holds content (None: removed)."""

    def recorded(self) -> list[Path]:
        """The files recorded so far."""


class NoChangeLog:
    """Changes not recorded (a tool context outside a turn)."""

    def before(self, path: Path, previous: str | None) -> None:
        return None

    def after(self, path: Path, content: str | None) -> None:
        return None

    def recorded(self) -> list[Path]:
        return []


Confirm = Callable[[str, str], Awaitable[bool]]
"""Asks the user (tool name, question); True means allowed."""


class NobodyToAsk(Exception):
    """A confirmation was needed and nobody can answer it (forge-lsp run, a client that cannot ask)."""


async def _deny(_tool: str, _question: str) -> bool:
    raise NobodyToAsk("nobody can be asked")


@dataclass
class ToolContext:
    """Everything a tool may touch: the workspace, settings, files, undo, todos, the user."""

    workspace: Workspace
    config: ForgeConfig
    files: FileStore = field(default_factory=DiskFiles)
    snapshots: Snapshots = field(default_factory=Snapshots)
    todos: list[dict[str, str]] = field(default_factory=list)
    confirm: Confirm = _deny
    call_id: str | None = None
    """The tool call running now (calls run one at a time): what a question to the user is about."""
    tool: str | None = None
    """The name of the tool running now: what an edit the user reviews is labelled with."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    watch: Watch = unwatched
    """Told about child process groups, so a restarted server can kill what a dead one left."""
    notice: Callable[[str], None] = field(default=lambda message: logging.getLogger("forge_lsp.tools").warning("%s", message))
    """Tells the user something once (a shell sandbox that cannot run): showMessage in an editor, stderr in the CLI."""
    changes: ChangeLog = field(default_factory=NoChangeLog)
    """Told about each file change of the turn (forge.undoTurn)."""
    notes: list[str] = field(default_factory=list)
    """What the running call's file changes left to tell the model (FileStore.write_text): added to its result."""

    async def read_file(self, path: Path, max_bytes: int | None = None) -> str:
        """A workspace file's text (the editor's buffer when open); refuses binary, huge and non-regular files.

        Bytes that are not UTF-8 come back as lone surrogates (surrogateescape):
        write the text back and they are the same bytes; show it with for_display.
        The disk is read in a thread: a slow file system never stalls the server,
        and the tool timeout still ends the call.
        """
        buffered = await self.files.read_text(path)
        if buffered is not None:
            return buffered
        rel = self.workspace.relative(path)
        try:
            return await asyncio.to_thread(read_regular, path, rel, max_bytes or self.config.max_file_size_bytes)
        except FileMissing:
            raise await self.missing(path) from None

    async def missing(self, path: Path, what: str = "file") -> ToolFailure:
        """The failure for a path that is not there, naming the nearest ones that are (tools/nearest.py)."""
        rel = self.workspace.relative(path)
        help_ = await asyncio.to_thread(nearest.hint, self.workspace.root, rel)
        return FileMissing(f"{what} not found: {rel}{help_}", rel)

    def check_changeable(self, path: Path) -> None:
        """ToolFailure for a file git executes from (.git/config, .git/hooks/*, a .git file), in every workspace."""
        try:
            self.workspace.check_changeable(path)
        except GitExecutes as exc:
            raise ToolFailure(str(exc), self.workspace.relative(path)) from None

    async def current(self, path: Path) -> str | None:
        """What a file holds now (the editor's buffer when open), None when it does not exist."""
        if path.exists():
            return await self.read_file(path)
        return await self.files.read_text(path)

    async def change_file(self, path: Path, content: str | None) -> None:
        """Write (or, with None, remove) a file, keeping its old content for undo; refuses what git executes from."""
        self.check_changeable(path)
        previous = await self.current(path)
        self.snapshots.save(path, previous)
        try:
            await self.apply_change(path, previous, content)
        except BaseException:
            self.snapshots.pop(path)  # not changed: nothing of this call to undo
            raise

    async def apply_change(self, path: Path, previous: str | None, content: str | None) -> None:
        """Write (None: remove) a file that holds previous now, telling the turn's change log before and after."""
        self.changes.before(path, previous)
        try:
            if content is None:
                await self.files.delete(path, tool=self.tool)
            else:
                note = await self.files.write_text(path, content, tool=self.tool)
                if note and note not in self.notes:
                    self.notes.append(note)
        except BaseException:
            self.changes.after(path, previous)  # not changed (refused, failed): as it was
            raise
        self.changes.after(path, content)

    async def command_started(self) -> CommandMark:
        """Before a call that may change any file (the shell, an MCP tool): what command_ended compares with."""
        recorded = self.changes.recorded()
        signatures = await asyncio.to_thread(lambda: {path: signature(path) for path in recorded}) if recorded else {}
        return CommandMark(signatures, await self.files.before_command())

    async def command_ended(self, mark: CommandMark, tool: str) -> None:
        """After that call: the open documents whose file it changed follow the disk (FileStore.after_command),
        and so does the turn's record for an undo (forge.undoTurn puts back what the turn's commands changed
        too): in those documents, and in the files the turn's file tools changed before it. A document with
        the user's unsaved changes is left out (its buffer, not the disk, is what an undo compares). The notes
        go to the call's result."""
        followed, notes = await self.files.after_command(mark.store, tool)
        self.notes.extend(note for note in notes if note not in self.notes)
        seen: set[Path] = set()
        for change in followed:
            seen.add(change.path)
            self.changes.before(change.path, change.before)
            self.changes.after(change.path, change.after)
        for path, before in mark.recorded.items():
            if path in seen or await asyncio.to_thread(signature, path) == before:
                continue
            if await self.files.read_text(path) is not None:
                continue  # open in the editor with unsaved changes: the buffer is what the turn left
            found, text = await asyncio.to_thread(_recorded_text, path)
            if found:
                self.changes.after(path, text)


def _recorded_text(path: Path) -> tuple[bool, str | None]:
    """(True, what path holds now; None: removed), or (False, None) when it cannot be compared (a FIFO, too large)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return True, None
    except OSError:
        return False, None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORDED_BYTES:
        return False, None
    try:
        with open(path, "rb") as fh:
            return True, fh.read(MAX_RECORDED_BYTES + 1).decode("utf-8", ENCODING_ERRORS)
    except OSError:
        return False, None


MAX_RECORDED_BYTES = 256 * 1024 * 1024
"""A file a command made larger than this is not read for the undo record (an undo then sees it changed)."""


Run = Callable[[Mapping[str, Any], ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Implementation:
    """What a built-in tool's module declares: the description and JSON schema the model sees, how a call
    runs, and (for a tool with a time limit of its own) how long the registry lets it run. Its name and every
    other fact are its entry in the catalog (domain/tool_catalog.py), which names this object."""

    description: str
    parameters: dict[str, Any]
    run: Run
    timeout: Callable[[ForgeConfig], float] | None = None
    """Seconds a call may run, from the configuration; None: tool_timeout_secs."""


@dataclass(frozen=True)
class ToolDefinition:
    """One tool: the name and JSON schema the model sees, how it runs, and what it acts on.

    A built-in tool's definition is made from its catalog entry and its module's Implementation
    (tools/registry.py); an MCP tool's from what its server says. path_arg and changes_files come with the
    tool, so that every rule about a tool's file (an agent's write_under) is derived from one place and no
    tool escapes it by naming its argument differently (remove and undo take `path`, write and patch
    `file_path`)."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Run
    path_arg: str | None = None
    """The argument that names the one workspace file (or folder) a call acts on; None: no such argument."""
    changes_files: bool = False
    """Whether a call may change the workspace's files (its path_arg's file; or any file, with no path_arg)."""
    kind: ToolKind = "other"
    """What a call is, as ACP names it (domain/tool_catalog.py)."""
    timeout: Callable[[ForgeConfig], float] | None = None
    """Seconds a call may run, from the configuration; None: tool_timeout_secs."""

    @classmethod
    def builtin(cls, facts: ToolFacts, implementation: Implementation) -> ToolDefinition:
        """A built-in tool: its catalog entry with its module's implementation."""
        return cls(
            facts.name,
            implementation.description,
            implementation.parameters,
            implementation.run,
            path_arg=facts.path_arg,
            changes_files=facts.changes_files,
            kind=facts.kind,
            timeout=implementation.timeout,
        )

    def target(self, arguments: Mapping[str, Any] | None) -> str | None:
        """The path a call's arguments give in path_arg, when that is a string."""
        value = (arguments or {}).get(self.path_arg) if self.path_arg else None
        return value if isinstance(value, str) else None

    def schema(self) -> dict[str, Any]:
        """The OpenAI tool schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A closed JSON-schema object."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def string(description: str) -> dict[str, Any]:
    """A string property."""
    return {"type": "string", "description": description}


def integer(description: str) -> dict[str, Any]:
    """An integer property."""
    return {"type": "integer", "description": description}


def boolean(description: str) -> dict[str, Any]:
    """A boolean property."""
    return {"type": "boolean", "description": description}
