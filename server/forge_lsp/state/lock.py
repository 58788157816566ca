"""The turn lock: one turn at a time per workspace, across processes."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_FILE = "turn.lock"


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
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
            finally:
                os.close(fd)
            return holder or "another process"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, turn {turn_id}".encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        """Let the next turn run."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None
