"""stdout for the stdio transport: messages written in one event-loop step go out in one write.

pygls writes and flushes every message on its own. A turn sends several
notifications per tool call (forge/event, logMessage, progress), each a
syscall and a wake-up of the client; coalescing them per loop step keeps
their order and costs one write.
"""

from __future__ import annotations

import asyncio
import atexit
from typing import BinaryIO


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
