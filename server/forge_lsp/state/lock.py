"""The turn lock: one turn at a time per workspace, across processes."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_FILE = "turn.lock"
# The holder writes who it is just after it takes the lock; a refusal in between reads an empty file and waits
# this long for the name (CI, stop 43: three `forge-lsp run` at once, one refused as "another process").
HOLDER_WAIT_SECS = 0.5


class TurnLock:
    """A cross-process lock on a workspace's turns: flock on a file, released when the process dies."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, turn_id: str) -> str | None:
        """Take the lock for turn_id; None on success, else who holds it ("pid N, turn T")."""
        if self.path is None:  # state in memory: no other process can share it
            return None
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            # No lock file (read-only folder, a symlink planted there): this process still runs one turn at a time.
            log.warning("turn lock %s: %s; turns are not serialized across processes", self.path, exc)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                return _holder(fd) or "another process"
            finally:
                os.close(fd)
        holder = f"pid {os.getpid()}, turn {turn_id}".encode()
        os.pwrite(fd, holder, 0)
        os.ftruncate(fd, len(holder))
        self._fd = fd
        return None

    def release(self) -> None:
        """Let the next turn run."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def _holder(fd: int) -> str:
    """Who holds the lock, as the holder wrote it: read again for a moment while the file is still empty."""
    deadline = time.monotonic() + HOLDER_WAIT_SECS
    while not (holder := os.pread(fd, 200, 0).decode("utf-8", "replace").strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return holder
