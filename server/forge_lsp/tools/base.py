"""What every tool is made of: its definition, its context, its failures."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.tools.workspace import Workspace


class ToolFailure(Exception):
    """A tool call that failed; the message goes back to the model as the cause."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


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

    async def write_text(self, path: Path, content: str) -> None:
        """Write a whole file's new content."""

    async def delete(self, path: Path) -> None:
        """Remove a file."""


def write_atomic(path: Path, content: str) -> None:
    """Write through a temporary file and rename, so no reader sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class DiskFiles:
    """The plain FileStore: atomic writes to disk."""

    async def read_text(self, path: Path) -> str | None:
        return None

    async def write_text(self, path: Path, content: str) -> None:
        write_atomic(path, content)

    async def delete(self, path: Path) -> None:
        path.unlink()


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


Confirm = Callable[[str, str], Awaitable[bool]]
"""Asks the user (tool name, question); True means allowed."""


async def _deny(_tool: str, _question: str) -> bool:
    return False


@dataclass
class ToolContext:
    """Everything a tool may touch: the workspace, settings, files, undo, todos, the user."""

    workspace: Workspace
    config: ForgeConfig
    files: FileStore = field(default_factory=DiskFiles)
    snapshots: Snapshots = field(default_factory=Snapshots)
    todos: list[dict[str, str]] = field(default_factory=list)
    confirm: Confirm = _deny
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    watch: Callable[[int, bool], None] = field(default=lambda _pid, _running: None)
    """Told about child process groups, so a restarted server can kill what a dead one left."""

    async def read_file(self, path: Path, max_bytes: int | None = None) -> str:
        """A workspace file's text (the editor's buffer when open); refuses binary and huge files."""
        buffered = await self.files.read_text(path)
        if buffered is not None:
            return buffered
        rel = self.workspace.relative(path)
        if not path.exists():
            raise ToolFailure(f"file not found: {rel}", rel)
        if path.is_dir():
            raise ToolFailure(f"{rel} is a directory, not a file", rel)
        limit = max_bytes or self.config.max_file_size_bytes
        size = path.stat().st_size
        if size > limit:
            raise ToolFailure(f"{rel} is {size} bytes, over the {limit}-byte limit (max_file_size_bytes)", rel)
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolFailure(f"{rel} is a binary file ({size} bytes); it cannot be read as text", rel)
        return data.decode("utf-8", errors="replace")

    async def change_file(self, path: Path, content: str | None) -> None:
        """Write (or, with None, remove) a file, keeping its old content for undo."""
        previous: str | None = None
        if path.exists():
            previous = await self.read_file(path)
        elif (buffered := await self.files.read_text(path)) is not None:
            previous = buffered
        self.snapshots.save(path, previous)
        if content is None:
            await self.files.delete(path)
        else:
            await self.files.write_text(path, content)


Run = Callable[[Mapping[str, Any], ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class ToolDefinition:
    """One tool: the name and JSON schema the model sees, and how it runs."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Run

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
