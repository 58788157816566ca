"""A session's files through the ACP client (fs/read_text_file, fs/write_text_file: its unsaved buffers)
where it offers them, the disk otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import ClientCapabilities

from forge_lsp.redact import redact
from forge_lsp.tools.base import DiskFiles, ToolFailure

if TYPE_CHECKING:
    from forge_lsp.acp.agent import ForgeAgent

log = logging.getLogger(__name__)


class ClientFiles(DiskFiles):
    """Edits through the client (its unsaved buffers) when it offers fs/*; the disk otherwise.

    The client is asked only about a regular file, or one the disk does not have that this
    session wrote through the client (its buffer, not saved yet): ACP cannot ask whether a
    buffer is open, and clients answer a file that exists nowhere with "" (earlier CodeCompanion
    v19 releases) or an error shown to the user (acpx), so such a file is the disk's "file not
    found". A FIFO
    or a device is the disk's to refuse, and text over ``max_chars`` is not taken from the
    client: the disk read then applies the size limit with its own message.
    """

    def __init__(self, agent: ForgeAgent, session_id: str, caps: ClientCapabilities | None, max_chars: Callable[[], int]) -> None:
        self.agent = agent
        self.session_id = session_id
        self.max_chars = max_chars
        """The workspace's max_file_size_bytes as it is in force (the config may reload between prompts)."""
        fs = caps.fs if caps is not None else None
        self.can_read = bool(fs and fs.read_text_file)
        self.can_write = bool(fs and fs.write_text_file)
        self.written: set[Path] = set()
        """Files written through the client: it has a buffer of each, saved or not."""

    async def read_text(self, path: Path) -> str | None:
        if not self.can_read or self.agent.conn is None:
            return None
        kind = await asyncio.to_thread(_file_kind, path)
        if kind == "other" or (kind == "absent" and path not in self.written):
            return None
        try:
            response = await self.agent.conn.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:  # the client cannot: read the disk
            log.info("fs/read_text_file %s: %s; reading the disk", path, exc)
            return None
        content = getattr(response, "content", None)
        if not isinstance(content, str) or len(content) > self.max_chars():
            return None
        return content

    async def write_text(self, path: Path, content: str, tool: str | None = None) -> None:
        if self.can_write and self.agent.conn is not None:
            try:
                await self.agent.conn.write_text_file(session_id=self.session_id, path=str(path), content=content)
            except RequestError as exc:  # acpx without --approve-all: Internal error, {details: "Permission denied ..."}
                raise ToolFailure(f"the client did not write {self._shown(path)}: {_client_reason(exc)}") from exc
            self.written.add(path)
            return
        await super().write_text(path, content)

    def _shown(self, path: Path) -> str:
        """path as the model and the user read it: relative to the session's workspace when below it."""
        session = self.agent.sessions.get(self.session_id)
        if session is not None:
            with contextlib.suppress(ValueError):
                return str(path.relative_to(session.root))
        return str(path)

    async def delete(self, path: Path, tool: str | None = None) -> None:
        self.written.discard(path)
        await super().delete(path)


def _client_reason(exc: RequestError) -> str:
    """A client's JSON-RPC error as a person reads it: its data's details or message when it gives one
    (acpx: "Permission denied for fs/write_text_file"), else its message."""
    data = exc.data
    if isinstance(data, dict):
        for key in ("details", "message"):
            if isinstance(data.get(key), str) and data[key].strip():
                return redact(data[key].strip())
    elif isinstance(data, str) and data.strip():
        return redact(data.strip())
    return redact(str(exc))


def _file_kind(path: Path) -> str:
    """ "regular", "absent" (nothing there, or a dangling link) or "other" (a FIFO, a device, a folder, unreadable)."""
    try:
        return "regular" if stat.S_ISREG(os.stat(path).st_mode) else "other"
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "other"
