"""The logs sqlite replays on opening a state file: which are ours, which are set aside unread.

sqlite replays any valid -wal beside the database it opens (and rolls back any hot -journal),
then checkpoints it into the file: a log planted there (a git pull, a copied folder) would
replace the user's rows. So forge-lsp records the header of the -wal it writes (32 bytes:
checkpoint sequence, salts and checksum, new each time the log restarts) in the user's
registry after each of its writes, and a -wal with any other header is set aside before the
database is opened. Not set aside: the header the next restart of the recorded log writes (a
crash between a write and its record; see ours); a -wal another process holds open (a running
forge-lsp, or one that predates the record: its log is live); a log too short to hold a frame
(sqlite ignores it). A new log (no restart of one: random salts) is begun and recorded when a
state file is opened, before anything of value is written to it. A -journal is never ours
(state files are always in WAL mode).
"""

from __future__ import annotations

import fcntl
import logging
import os
import struct
import threading
from collections import Counter
from pathlib import Path

log = logging.getLogger(__name__)

WAL_HEADER = 32
SHM_DMS = 128
"""sqlite's unix VFS: every connection holds a read lock on this byte of the -shm while it has the database open."""

_FLOCK = "hhqqi4x"  # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid
_open_here: Counter[str] = Counter()
_open_lock = threading.Lock()


def side(path: Path, suffix: str) -> Path:
    """A side file of a state file: state.sqlite3-wal, -shm, -journal."""
    return path.with_name(path.name + suffix)


def wal_header(path: Path) -> str | None:
    """The header of path's -wal (hex), or None when there is none or it is too short to hold one."""
    try:
        fd = os.open(side(path, "-wal"), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        head = os.pread(fd, WAL_HEADER, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    return head.hex() if len(head) == WAL_HEADER else None


def opened(path: Path, is_open: bool) -> None:
    """Count this process's open stores of a state file (see held_open)."""
    with _open_lock:
        _open_here[str(path)] += 1 if is_open else -1
        if _open_here[str(path)] <= 0:
            del _open_here[str(path)]


def held_open(path: Path) -> int | None:
    """The pid of a process that has the database open (a lock on its -shm), or None.

    Never asks about a file this process has open: closing any descriptor of the -shm would
    drop the locks sqlite holds on it here (POSIX locks belong to the process). Such a file
    counts as held, by this process.
    """
    with _open_lock:
        if _open_here[str(path)] > 0:
            return os.getpid()
    getlk = getattr(fcntl, "F_OFD_GETLK", None)  # Linux: it sees every process's locks, this one's too
    if getlk is None:
        return None
    try:
        fd = os.open(side(path, "-shm"), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, SHM_DMS, 1, 0)
        kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, getlk, query))
    except OSError as exc:
        log.info("state: cannot tell whether %s is in use (%s); taken as not", path, exc)
        return None
    finally:
        os.close(fd)
    return None if kind == fcntl.F_UNLCK else pid


def _fields(header: str) -> tuple[bytes, int, int] | None:
    """A header's magic, version and page size; its checkpoint sequence; its first salt."""
    try:
        raw = bytes.fromhex(header)
    except ValueError:
        return None
    if len(raw) != WAL_HEADER:
        return None
    return raw[:12], int.from_bytes(raw[12:16], "big"), int.from_bytes(raw[16:20], "big")


def ours(header: str, recorded: str | None) -> bool:
    """Whether a -wal header is the one recorded, or the one the next restart of that log writes
    (sqlite adds one to the checkpoint sequence and to the first salt): a write that restarted the
    log, then a crash before its record, leaves that one. Any other is not ours."""
    if recorded is None:
        return False
    if header == recorded:
        return True
    now, then = _fields(header), _fields(recorded)
    if now is None or then is None:
        return False
    return now[0] == then[0] and now[1] == (then[1] + 1) % 2**32 and now[2] == (then[2] + 1) % 2**32


def foreign_logs(path: Path, recorded: str | None) -> list[str]:
    """The side files of path that sqlite would replay and this user's forge-lsp did not write
    ("-wal", "-journal"; with a -wal goes its -shm): what must be set aside before opening."""
    found = []
    if os.path.lexists(side(path, "-journal")):
        found.append("-journal")
    header = wal_header(path)
    if header is not None and not ours(header, recorded):
        holder = held_open(path)
        if holder is None:
            found += ["-wal", *(["-shm"] if os.path.lexists(side(path, "-shm")) else [])]
        else:
            log.info("state: %s-wal is not the one recorded, but pid %s has the file open: it is live, left in use", path, holder)
    return found
