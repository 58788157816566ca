"""The stdio/TCP transport: frames read robustly, messages written in one event-loop step go out in one write.

pygls writes and flushes every message on its own. A turn sends several
notifications per tool call (forge/event, logMessage, progress), each a
syscall and a wake-up of the client; coalescing them per loop step keeps
their order and costs one write.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException


class CoalescingWriter:
    """A BinaryIO-like stdout whose flush is deferred to the end of the current loop step."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self._pending: list[bytes] = []
        self._scheduled = False
        atexit.register(self._flush_now)

    def write(self, data: bytes) -> int:
        self._pending.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop (a thread, or shutting down): write through
            self._flush_now()
            return
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush_now)

    def _flush_now(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            self.raw.write(data)
            self.raw.flush()
        except (BrokenPipeError, ValueError):  # the client went away
            pass

    def close(self) -> None:
        self._flush_now()


# -- reading frames -------------------------------------------------------------------

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""A Content-Length above this is a broken frame, not a message to wait for."""
MAX_HEADER_BYTES = 8192
CHUNK = 65536
_LENGTH = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)
# Raw CR/LF never occur inside a JSON text except as whitespace, and a bare Content-Length
# is no JSON token: seen inside a body, it is the next frame's header (the length was wrong).
_NEXT_HEADER = re.compile(rb"content-length:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_OTHER_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r?$")


class _Chunks:
    """Whatever bytes have arrived: stdin read in the server's thread pool, or a TCP stream."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    async def read(self) -> bytes:
        stdin = getattr(self.reader, "stdin", None)
        if stdin is not None:
            read1 = getattr(stdin, "read1", None) or stdin.read
            loop = asyncio.get_running_loop()
            return bytes(await loop.run_in_executor(getattr(self.reader, "executor", None), read1, CHUNK))
        if isinstance(self.reader, asyncio.StreamReader):
            return await self.reader.read(CHUNK)
        return bytes(await self.reader.readline())


class FrameReader:
    """Splits a byte stream into LSP message bodies, resynchronising on the next header after a bad frame.

    pygls's reader waits forever on a huge Content-Length, and a frame whose
    header does not parse (``Content-Length: abc``, none at all) makes it glue
    the body to the next frame's header, losing that message too. Here each
    bad frame is logged and skipped, and reading goes on at the next header.
    """

    def __init__(self, reader: Any, logger: logging.Logger) -> None:
        self.chunks = _Chunks(reader)
        self.log = logger
        self.buffer = bytearray()
        self.eof = False

    async def _more(self) -> bool:
        if self.eof:
            return False
        data = await self.chunks.read()
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def _skip(self, upto: int, why: str) -> None:
        dropped = bytes(self.buffer[:upto])
        del self.buffer[:upto]
        self.log.warning("LSP input: %s; skipped %d bytes: %r", why, len(dropped), dropped[:120])

    async def next_body(self) -> bytes | None:
        """The next frame's body, or None at the end of input."""
        while True:
            end = _HEADER_END.search(self.buffer)
            if end is None:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    keep = self.buffer.rfind(b"Content-Length")
                    self._skip(keep if keep > 0 else len(self.buffer) - 64, "no header end in 8 KiB")
                if not await self._more():
                    if self.buffer.strip():
                        self._skip(len(self.buffer), "input ended inside a frame")
                    return None
                continue
            header = bytes(self.buffer[: end.start()])
            matches = list(_LENGTH.finditer(header))
            if not matches:
                self._skip(end.end(), "a frame without Content-Length")
                continue
            found = matches[-1]
            before = header[: found.start()]
            if before.strip() and not all(_OTHER_HEADER.match(line) for line in before.splitlines() if line.strip()):
                # What precedes the header is the rest of a broken frame.
                self._skip(found.start(), "bytes before a header")
                continue
            value = found.group(1).strip()
            if not value.isdigit() or int(value) > MAX_FRAME_BYTES:
                self._skip(end.end(), f"bad Content-Length {value[:40]!r}")
                continue
            length, start = int(value), end.end()
            while len(self.buffer) < start + length:
                cut = _NEXT_HEADER.search(self.buffer, start)
                if cut is not None:
                    self._skip(cut.start(), f"a frame shorter than its Content-Length {length}")
                    break
                if not await self._more():
                    self._skip(len(self.buffer), "input ended inside a frame")
                    return None
            else:
                body = bytes(self.buffer[start : start + length])
                del self.buffer[: start + length]
                return body


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A handler cancelled because the server is exiting is no error: no traceback for it on stderr."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        logging.getLogger(__name__).debug("cancelled: %s", context.get("message"))
        return
    loop.default_exception_handler(context)


async def read_messages(
    stop_event: threading.Event,
    reader: Any,
    protocol: Any,
    logger: logging.Logger | None = None,
    error_handler: Callable[[Exception, type[JsonRpcException]], Any] | None = None,
) -> None:
    """pygls's main loop (io_.run_async, same signature) over a FrameReader."""
    log = logger or logging.getLogger(__name__)
    # `exit` stops the loop while handlers still run (an exit without shutdown, mid-initialized);
    # pygls's callbacks then see CancelledError, which asyncio would print as a traceback.
    asyncio.get_running_loop().set_exception_handler(_quiet_cancellation)
    frames = FrameReader(reader, log)
    while not stop_event.is_set():
        body = await frames.next_body()
        if body is None:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except ValueError as exc:
            cut = _NEXT_HEADER.search(body)
            if cut is not None:  # a body too long for its message swallowed the next header: read it again
                frames.buffer[0:0] = body[cut.start() :]
            log.warning("LSP input: a frame that is not JSON (%s): %r", exc, body[:120])
            continue
        try:
            protocol.handle_message(message)
        except Exception as exc:
            log.exception("Unable to handle message")
            if error_handler:
                error_handler(exc, JsonRpcException)


def install_reader() -> None:
    """Make pygls's stdio and TCP servers read through read_messages.

    pygls.server calls its module's run_async; there is no hook to pass a
    reader loop, so the name is rebound (this process serves one server).
    """
    import pygls.server

    pygls.server.run_async = read_messages  # type: ignore[attr-defined]
