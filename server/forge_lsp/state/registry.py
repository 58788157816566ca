"""The registry of this user's state files: resolved path -> the random id in its meta.

A state file in an untrusted workspace's .forge/ is used only when it is registered
here and carries the recorded id (see StateRegistry).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forge_lsp.state.dirs import _unsafe_file
from forge_lsp.userfiles import read_table, write_json

log = logging.getLogger(__name__)

ID_KEY = "state_id"
REGISTRY_FILE = "states.json"
MAX_REGISTRY_BYTES = 16 * 1024 * 1024


def registry_path() -> Path:
    """$XDG_STATE_HOME/forge-lsp/states.json (default ~/.local/state), next to trust.json."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "forge-lsp" / REGISTRY_FILE


def _state_id(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key=?", (ID_KEY,)).fetchone()
    return str(row[0]) if row else None


def read_state_id(path: Path) -> str | None:
    """The id a state file carries, read without writing anything (no -wal/-shm, no lock), or None."""
    if _unsafe_file(path) is not None or not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True, timeout=1)
    except sqlite3.Error:
        return None
    try:
        if hasattr(db, "enable_load_extension"):
            db.enable_load_extension(False)
        kind = db.execute("SELECT type FROM sqlite_master WHERE name='meta'").fetchone()
        return _state_id(db) if kind == ("table",) else None
    except sqlite3.Error:
        return None
    finally:
        db.close()


class StateRegistry:
    """The state files this user's forge-lsp created or adopted: resolved path -> the random id in its meta.

    A state file in a workspace's .forge/ that is not here (it came with a clone, was copied, or
    predates the registry) is used only in a trusted workspace. Kept outside every workspace, 0600,
    written atomically; an unreadable registry counts as empty (logged), never a crash.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or registry_path()
        self._fd: int | None = None
        self._depth = 0
        self._threads = threading.RLock()

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive across processes and threads (reentrant in a thread): a state file is created and
        registered under it, so another server never sees a file of ours before it is recorded."""
        with self._threads, self._flock():
            yield

    @contextlib.contextmanager
    def _flock(self) -> Iterator[None]:
        if self._depth == 0:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                self._fd = os.open(self.path.with_name(REGISTRY_FILE + ".lock"), flags, 0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except OSError as exc:
                log.warning("state registry lock: %s; state files are registered unlocked", exc)
                if self._fd is not None:
                    os.close(self._fd)
                self._fd = None
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _read(self) -> dict[str, Any]:
        states = read_table(self.path, "states", MAX_REGISTRY_BYTES, "state registry", "no state file counts as yours")
        if states is None:
            log.warning("state registry %s has no states table; no state file counts as yours", self.path)
            return {}
        return states

    def known_id(self, path: Path) -> str | None:
        """The id recorded for a state file's path, or None."""
        entry = self._read().get(str(path))
        value = entry.get("id") if isinstance(entry, dict) else None
        return value if isinstance(value, str) and value else None

    def is_registered(self, path: Path) -> bool:
        """Whether path is a state file of this user's: recorded, and carrying the recorded id."""
        known = self.known_id(path)
        return known is not None and read_state_id(path) == known

    def known_wal(self, path: Path) -> str | None:
        """The header of the -wal this user's forge-lsp last wrote beside a state file (see state.wal), or None."""
        entry = self._read().get(str(path))
        value = entry.get("wal") if isinstance(entry, dict) else None
        return value if isinstance(value, str) and value else None

    def record_wal(self, path: Path, header: str) -> None:
        """Record the header of the -wal just written beside a registered state file."""
        with self.lock():
            states = self._read()
            entry = states.get(str(path))
            if not isinstance(entry, dict) or entry.get("wal") == header:
                return
            entry["wal"] = header
            write_json(self.path, {"version": 1, "states": states}, ".states-")

    def register(self, path: Path, state_id: str) -> None:
        """Record path as the user's state file with its id (under a lock: servers of other workspaces write too)."""
        with self.lock():
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            states = self._read()
            entry = states.get(str(path))
            if isinstance(entry, dict) and entry.get("id") == state_id:
                return
            states[str(path)] = {"id": state_id, "registered": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            write_json(self.path, {"version": 1, "states": states}, ".states-")
