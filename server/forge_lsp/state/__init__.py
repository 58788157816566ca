"""Conversation state in SQLite (.forge/state.sqlite3, WAL): a restarted server resumes.

The state file comes with the workspace, so it is untrusted input: a cloned
repository may carry one. Nothing read from it can make the server signal a
process it did not start on this boot, a file that is not the user's own (or
a symlink) is never opened, and a damaged one is moved aside, never a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from forge_lsp.domain.compact import Compaction
from forge_lsp.domain.messages import ChatMessage, Usage
from forge_lsp.redact import redact, redact_data
from forge_lsp.userfiles import read_table, write_json

log = logging.getLogger(__name__)

STATE_DIR = ".forge"
STATE_FILE = "state.sqlite3"
LOCK_FILE = "turn.lock"
INTERRUPTED_RESULT = "the tool call did not finish: the server stopped before it returned"
SIDE_FILES = ("-wal", "-shm", "-journal")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id TEXT NOT NULL REFERENCES conversations(id),
  turn_id TEXT,
  data TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
CREATE TABLE IF NOT EXISTS turns (
  id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL,
  prompt TEXT NOT NULL,
  status TEXT NOT NULL,
  summary TEXT,
  started REAL NOT NULL,
  ended REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS compactions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id TEXT NOT NULL,
  first INTEGER NOT NULL,
  last INTEGER NOT NULL,
  summary TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS processes (
  pid INTEGER PRIMARY KEY,
  pgid INTEGER NOT NULL,
  boot_id TEXT NOT NULL,
  started TEXT NOT NULL,
  cmdline TEXT NOT NULL,
  uid INTEGER NOT NULL,
  server INTEGER NOT NULL,
  server_started TEXT NOT NULL
);
"""

COLUMNS = {
    "conversations": ["id", "created"],
    "messages": ["id", "conversation_id", "turn_id", "data", "created"],
    "turns": ["id", "conversation_id", "prompt", "status", "summary", "started", "ended"],
    "meta": ["key", "value"],
    "compactions": ["id", "conversation_id", "first", "last", "summary", "created"],
    "processes": ["pid", "pgid", "boot_id", "started", "cmdline", "uid", "server", "server_started"],
}

Notify = Callable[[str], None]


class DamagedState(Exception):
    """A state file that is not a usable forge-lsp database."""


class UnsafeStateDir(OSError):
    """A .forge/ that is a symlink, not a folder, or not the user's own."""


# -- what /proc says about a process -------------------------------------------------


def boot_id() -> str:
    """This boot's random id: a pid recorded on another boot (or another machine) means nothing here."""
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: state, ppid, pgrp, session, ..., starttime at 19."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def start_time(pid: int) -> str | None:
    """The kernel's start time of a process (tells a reused pid apart), or None if it is gone."""
    fields = _stat_fields(pid)
    return fields[19] if fields else None


def cmdline(pid: int) -> list[str] | None:
    """A process's argv as /proc shows it, or None."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1]] if raw else []


def owner(pid: int) -> int | None:
    """The real uid of a process, or None (when its real and effective uids differ: not ours to judge)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                ids = {int(x) for x in line.split()[1:]}
                return ids.pop() if len(ids) == 1 else None
    except (OSError, ValueError):
        return None
    return None


def ancestors() -> set[int]:
    """This process, its parents up to init, and their process groups and sessions."""
    out = {0, 1, os.getpid(), os.getpgrp(), os.getsid(0)}
    pid = os.getpid()
    for _ in range(256):
        fields = _stat_fields(pid)
        if fields is None:
            break
        out.update(int(f) for f in fields[1:4])
        pid = int(fields[1])
        if pid <= 1:
            break
    return out


def same_command(recorded: list[str], now: list[str]) -> bool:
    """The process still runs the command line we started it with.

    ``bash -c "sleep 60"`` execs sleep in place: the group leader then shows
    the command itself, whose words must all be in the recorded command.
    """
    if recorded == now:
        return True
    if len(recorded) == 3 and recorded[1] == "-c" and now:
        return " ".join(now) in recorded[2]
    return False


def may_signal(row: dict[str, Any], boot: str, spare: set[int]) -> str | None:
    """Why the recorded process group must not be signalled, or None when it is surely ours.

    Every recorded fact is checked against /proc: a row written by anyone but
    this user's server on this boot fails at least one of them.
    """
    pid, pgid = int(row["pid"]), int(row["pgid"])
    if pid <= 1 or pgid <= 1:
        return "pid <= 1"
    if pid in spare or pgid in spare:
        return "the server itself or one of its ancestors"
    if not boot or row["boot_id"] != boot:
        return "recorded on another boot"
    if int(row["uid"]) != os.getuid() or owner(pid) != os.getuid():
        return "not this user's process"
    fields = _stat_fields(pid)
    if fields is None:
        return "gone"
    if fields[19] != str(row["started"]):
        return "a different process now has this pid"
    if int(fields[2]) != pgid or pgid != pid:
        return "not the leader of the recorded process group"
    try:
        recorded = json.loads(row["cmdline"])
    except (TypeError, ValueError):
        return "no command line recorded"
    now = cmdline(pid)
    # Command lines are stored redacted (a key in a curl command), by shape only so that every
    # boot redacts alike: compare them redacted too.
    now = None if now is None else [redact(a, []) for a in now]
    if not isinstance(recorded, list) or now is None or not same_command([str(a) for a in recorded], now):
        return "runs another command"
    return None


# -- the state folder and file --------------------------------------------------------


def _own_dir(path: Path) -> bool:
    info = path.lstat()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def ensure_state_dir(root: Path) -> Path:
    """.forge/ in the workspace, with a .gitignore that keeps it out of git.

    UnsafeStateDir when .forge is a symlink (it may point out of the
    workspace), not a folder, or not the user's own.
    """
    folder = root / STATE_DIR
    with contextlib.suppress(FileExistsError):
        folder.mkdir(parents=True)
    if not _own_dir(folder):
        raise UnsafeStateDir(f"{folder} is a symlink, not a folder, or not owned by you; it is not used")
    ignore = folder / ".gitignore"
    if not ignore.exists() and not ignore.is_symlink():
        ignore.write_text("*\n", encoding="utf-8")
    return folder


def user_state_dir(root: Path) -> Path:
    """Where a workspace's state lives when its .forge/ cannot be used: the user's state folder."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "forge-lsp" / "workspaces"
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    folder = base / f"{root.name or 'root'}-{key}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not _own_dir(folder):
        raise UnsafeStateDir(f"{folder} is not a folder owned by you")
    return folder


def _unsafe_file(path: Path) -> str | None:
    """Why a state file (or its -wal/-shm) must not be opened, or None."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return "it is a symlink"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.getuid():
        return f"it belongs to uid {info.st_uid}, not to you (uid {os.getuid()})"
    return None


def move_aside(path: Path, why: str) -> Path:
    """Rename a state file (and its -wal/-shm) to <name>.<why>-<timestamp>; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    # rename never follows a symlink: the link itself moves, whatever it points to.
    os.rename(path, target)
    for side in SIDE_FILES:
        extra = path.with_name(path.name + side)
        if extra.exists() or extra.is_symlink():
            os.rename(extra, target.with_name(target.name + side))
    return target


OWN_OBJECTS = frozenset({*COLUMNS, "messages_by_conversation", "sqlite_sequence"})


class RefusedState(DamagedState):
    """A state database holding something we never create (a trigger, a view): it may run SQL on our writes."""


def _foreign_objects(db: sqlite3.Connection) -> list[str]:
    """Schema objects we never create; checked before anything is written, trusted workspace or not."""
    rows = db.execute("SELECT type, name FROM sqlite_master").fetchall()
    return [
        f"{kind} {name}"
        for kind, name in rows
        if kind not in ("table", "index") or (name not in OWN_OBJECTS and not str(name).startswith("sqlite_autoindex_"))
    ]


def _open(path: Path | str) -> sqlite3.Connection:
    """Open and check a state database; DamagedState when it is not one of ours (RefusedState: foreign SQL)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
    try:
        if hasattr(db, "enable_load_extension"):
            db.enable_load_extension(False)  # never load code named by a database
        foreign = _foreign_objects(db)
        if foreign:
            raise RefusedState(f"it holds {', '.join(foreign[:5])}, which forge-lsp never creates")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        check = db.execute("PRAGMA quick_check(1)").fetchone()
        if not check or check[0] != "ok":
            raise DamagedState(f"integrity check failed: {check[0] if check else 'no answer'}")
        old = [r[1] for r in db.execute("PRAGMA table_info(processes)")]
        if old and old != COLUMNS["processes"]:
            # An older layout: its rows carry too little to prove a process is ours; they are dropped unread.
            db.execute("DROP TABLE processes")
        for created in (False, True):
            for table, columns in COLUMNS.items():
                found = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                if (found or created) and found != columns:
                    raise DamagedState(f"table {table} has columns {found}, expected {columns}")
            if not created:
                db.executescript(SCHEMA)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise DamagedState(str(exc)) from exc
    except BaseException:
        db.close()
        raise
    return db


def _stored(message: ChatMessage) -> str:
    """A message as stored: secrets redacted in every string (before JSON escaping, so each is found)."""
    return json.dumps(redact_data(message.to_dict()))


def _messages(rows: list[Any]) -> Iterator[ChatMessage]:
    """The stored messages that parse; a row that does not (a hand-edited file) is skipped and logged."""
    for (data,) in rows:
        try:
            value = json.loads(data)
            if not isinstance(value, dict) or value.get("role") not in ("system", "user", "assistant", "tool"):
                raise ValueError(f"not a chat message: {str(data)[:80]!r}")
            yield ChatMessage.from_dict(value)
        except (TypeError, ValueError, AttributeError) as exc:
            log.warning("state: skipping a stored message that does not parse: %s", exc)


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

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive across processes (reentrant in this one): a state file is created and registered
        under it, so another server never sees a file of ours before it is recorded."""
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


class StateStore:
    """Conversations, their messages (appended one by one) and turns, for one workspace.

    Never raises on opening: a state file that cannot be used is moved aside
    (or, when .forge/ itself cannot be used, the state lives in the user's
    state folder), and ``notify`` is told once, naming both files.
    """

    def __init__(
        self, root: Path, notify: Notify | None = None, *, trusted: bool = False, registry: StateRegistry | None = None
    ) -> None:
        """trusted: whether the workspace is trusted; in an untrusted one, a state file in .forge/ that
        this user's forge-lsp did not create (see StateRegistry) is left as it is, and the state lives
        in the user's state folder instead."""
        self.notices: list[str] = []
        self._notify = notify or log.warning
        self._lock = threading.Lock()
        self.trusted = trusted
        self.registry = registry or StateRegistry()
        self.fallback = False
        """True when an unregistered .forge/ state of an untrusted workspace was left unused."""
        with self.registry.lock():
            self.path, self._db = self._connect(root.resolve())
            self._register()
        self.turn_lock = TurnLock(self.path.with_name(LOCK_FILE) if self.path.name == STATE_FILE else None)
        if self.turn_lock.acquire("(opening the state)") is None:
            # No turn runs anywhere: one marked running ended when its server died.
            self._db.execute("UPDATE turns SET status='failed', ended=? WHERE status='running'", (time.time(),))
            self.turn_lock.release()
        self._reap_orphans()

    def _say(self, message: str) -> None:
        self.notices.append(message)
        self._notify(message)

    def _folder(self, root: Path) -> Path:
        try:
            return ensure_state_dir(root)
        except OSError as exc:
            folder = user_state_dir(root)
            self._say(f"forge-lsp: cannot keep state in {root / STATE_DIR} ({exc}); using {folder / STATE_FILE} instead")
            return folder

    def _register(self) -> None:
        """Give the file in use an id (a new file, or one of an earlier version) and record it as the user's."""
        if self.path.name != STATE_FILE:
            return  # in memory
        try:
            with self._lock:
                self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (ID_KEY, uuid.uuid4().hex))
                sid = self._db.execute("SELECT value FROM meta WHERE key=?", (ID_KEY,)).fetchone()[0]
                # Into the main file now: another server reads the id from it without touching the -wal.
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.registry.register(self.path, str(sid))
        except (OSError, sqlite3.Error) as exc:
            log.warning("state: could not register %s as yours (%s); an untrusted workspace will not use it", self.path, exc)

    def _untrusted_fallback(self, root: Path, path: Path) -> Path:
        """The state file to use in an untrusted workspace: path when it is the user's own, else the fallback."""
        if self.trusted or path.parent != root / STATE_DIR:
            return path
        present = [p for p in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)) if os.path.lexists(p)]
        if not present or self.registry.is_registered(path):
            return path
        return self._fallback_path(root, path)

    def _fallback_path(self, root: Path, path: Path) -> Path:
        folder = user_state_dir(root)
        self.fallback = True
        self._say(
            f"forge-lsp: {path} was not created by your forge-lsp (it may have come with the repository, or "
            f"predate forge-lsp's record of its state files), and {root} is not trusted, so its conversations "
            f"are not used and the file is left as it is; this workspace's conversations are kept in "
            f"{folder / STATE_FILE}. If it is your own history, trust the workspace (Forge: Trust Workspace, "
            ":ForgeTrust, or forge-lsp trust DIR) and restart the server (reload the window) to use it."
        )
        return folder / STATE_FILE

    def _connect(self, root: Path) -> tuple[Path, sqlite3.Connection]:
        try:
            path = self._untrusted_fallback(root, self._folder(root) / STATE_FILE)
            for candidate in (path, *(path.with_name(path.name + s) for s in SIDE_FILES)):
                why = _unsafe_file(candidate)
                if why is not None:
                    moved = move_aside(candidate if candidate == path else path, "refused")
                    self._say(
                        f"forge-lsp: the state file {candidate} was not used ({why}); moved it to {moved}; "
                        "this workspace starts a fresh conversation"
                    )
                    break
            try:
                db = _open(path)
            except RefusedState as exc:
                moved = move_aside(path, "refused")
                self._say(
                    f"forge-lsp: the state file {path} was not used ({exc}); moved it to {moved}; "
                    "this workspace starts a fresh conversation"
                )
                return path, _open(path)
            except DamagedState as exc:
                moved = move_aside(path, "damaged")
                self._say(
                    f"forge-lsp: the state file {path} is damaged ({exc}); moved it to {moved}; "
                    "this workspace starts a fresh conversation"
                )
                return path, _open(path)
            if not self.trusted and not self.fallback and path.parent == root / STATE_DIR and os.path.lexists(path):
                known = self.registry.known_id(path)
                if known is not None and _state_id(db) != known:  # changed on opening (a -wal not of ours)
                    db.close()
                    fallback = self._fallback_path(root, path)
                    return fallback, _open(fallback)
            return path, db
        except (OSError, DamagedState, sqlite3.Error) as exc:
            self._say(f"forge-lsp: cannot open a state file for {root} ({exc}); this session's history is kept in memory only")
            return Path(":memory:"), _open(":memory:")

    def _reap_orphans(self) -> int:
        """Kill the process groups (shell commands) that a server killed mid-turn left running.

        Only a row that /proc confirms in every detail is acted on (see
        may_signal); every other row is dropped, never signalled.
        """
        killed = 0
        boot, spare = boot_id(), ancestors()
        self._db.row_factory = sqlite3.Row
        try:
            rows = [dict(r) for r in self._db.execute("SELECT * FROM processes")]
        finally:
            self._db.row_factory = None
        for row in rows:
            try:
                if start_time(int(row["server"])) == str(row["server_started"]):
                    continue  # a live server's command (another editor's, or ours): it is still running it
                why = may_signal(row, boot, spare)
            except (TypeError, ValueError, KeyError) as exc:
                why = f"unreadable row ({exc})"
            if why is None:
                try:
                    os.killpg(int(row["pgid"]), signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    pass
            else:
                log.info("state: not signalling recorded process %s: %s", row.get("pid"), why)
            self._db.execute("DELETE FROM processes WHERE pid=?", (row.get("pid"),))
        return killed

    def watch_process(self, pid: int, running: bool) -> None:
        """Record a child process group while it runs (see _reap_orphans), with what proves it is ours."""
        if running:
            fields = _stat_fields(pid)
            argv = cmdline(pid)
            me = start_time(os.getpid())
            if fields is not None and argv is not None and me is not None:
                self._run(
                    "INSERT OR REPLACE INTO processes (pid, pgid, boot_id, started, cmdline, uid, server, server_started)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        pid,
                        int(fields[2]),
                        boot_id(),
                        fields[19],
                        json.dumps([redact(a, []) for a in argv]),  # shapes only: the same on every boot
                        os.getuid(),
                        os.getpid(),
                        me,
                    ),
                )
        else:
            self._run("DELETE FROM processes WHERE pid=?", (pid,))

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return row[0] if row else None

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._lock:
            cur = self._db.execute(sql, args)
            return int(cur.lastrowid or 0)

    def current_conversation(self) -> str:
        """The conversation a new turn continues; one is created if there is none."""
        current = self._one("SELECT value FROM meta WHERE key='conversation'")
        return str(current) if current else self.new_conversation()

    def new_conversation(self) -> str:
        """Start a fresh conversation and make it current."""
        cid = uuid.uuid4().hex
        self._run("INSERT INTO conversations (id, created) VALUES (?, ?)", (cid, time.time()))
        self._run("INSERT OR REPLACE INTO meta (key, value) VALUES ('conversation', ?)", (cid,))
        return cid

    def select_conversation(self, conversation_id: str) -> bool:
        """Make a stored conversation current (the next turn continues it); False if there is none of that id."""
        if (
            not isinstance(conversation_id, str)
            or self._one("SELECT id FROM conversations WHERE id=?", (conversation_id,)) is None
        ):
            return False
        self._run("INSERT OR REPLACE INTO meta (key, value) VALUES ('conversation', ?)", (conversation_id,))
        return True

    def append(self, conversation_id: str, turn_id: str | None, message: ChatMessage) -> int:
        """Append one message; returns its row id (for update)."""
        return self._run(
            "INSERT INTO messages (conversation_id, turn_id, data, created) VALUES (?, ?, ?, ?)",
            (conversation_id, turn_id, _stored(message), time.time()),
        )

    def update(self, row_id: int, message: ChatMessage) -> None:
        """Replace a stored message (a tool result that got its retry notice)."""
        self._run("UPDATE messages SET data=? WHERE id=?", (_stored(message), row_id))

    def history(self, conversation_id: str) -> list[ChatMessage]:
        """Every message of a conversation, in order, with unanswered tool calls closed.

        A server killed mid-batch leaves tool calls without results; providers
        reject such a history, so each gets an error result saying so.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT data FROM messages WHERE conversation_id=? ORDER BY id", (conversation_id,)
            ).fetchall()
        messages = list(_messages(rows))
        out: list[ChatMessage] = []
        pending: dict[str, str] = {}
        for msg in messages:
            if msg.role != "tool" and pending:
                out += [ChatMessage("tool", INTERRUPTED_RESULT, tool_call_id=i, name=n) for i, n in pending.items()]
                pending.clear()
            out.append(msg)
            if msg.role == "assistant":
                pending = {c.id: c.name for c in msg.tool_calls}
            elif msg.role == "tool" and msg.tool_call_id:
                pending.pop(msg.tool_call_id, None)
        out += [ChatMessage("tool", INTERRUPTED_RESULT, tool_call_id=i, name=n) for i, n in pending.items()]
        return out

    def start_turn(self, turn_id: str, conversation_id: str, prompt: str) -> None:
        """Record a turn that began."""
        self._run(
            "INSERT INTO turns (id, conversation_id, prompt, status, started) VALUES (?, ?, ?, 'running', ?)",
            (turn_id, conversation_id, redact(prompt), time.time()),
        )

    def finish_turn(self, turn_id: str, status: str, summary: dict[str, Any]) -> None:
        """Record how a turn ended."""
        self._run(
            "UPDATE turns SET status=?, summary=?, ended=? WHERE id=?",
            (status, json.dumps(redact_data(summary)), time.time(), turn_id),
        )

    def turn_status(self, turn_id: str) -> str | None:
        """A turn's status, or None if unknown."""
        value = self._one("SELECT status FROM turns WHERE id=?", (turn_id,))
        return str(value) if value is not None else None

    def _turn_summaries(self, conversation_id: str) -> list[tuple[str, str, str | None, float, float | None]]:
        with self._lock:
            return self._db.execute(
                "SELECT prompt, status, summary, started, ended FROM turns WHERE conversation_id=? ORDER BY started",
                (conversation_id,),
            ).fetchall()

    def conversations(self) -> list[dict[str, Any]]:
        """Every conversation, the latest first: {id, title, turns, lastStatus, tokens, updated}.

        The title is the first prompt's first line (no model call); tokens are the prompt and
        completion tokens its turns recorded; updated is when it last changed (ISO 8601, UTC).
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, c.created, "
                "(SELECT MAX(created) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c"
            ).fetchall()
            turns = self._db.execute(
                "SELECT conversation_id, prompt, status, summary, started, ended FROM turns ORDER BY started, rowid"
            ).fetchall()
        by_conversation: dict[str, list[Any]] = {}
        for row in turns:
            by_conversation.setdefault(str(row[0]), []).append(row)
        out: list[dict[str, Any]] = []
        for cid, created, last_message in rows:
            own = by_conversation.get(str(cid), [])
            stamps = [
                x for x in (created, last_message, *(t[4] for t in own), *(t[5] for t in own)) if isinstance(x, int | float)
            ]
            usage = Usage()
            for t in own:
                usage = usage + _summary_usage(t[3])
            out.append(
                {
                    "id": str(cid),
                    "title": title_of(str(own[0][1])) if own else "",
                    "turns": len(own),
                    "lastStatus": str(own[-1][2]) if own else None,
                    "tokens": usage.total_tokens,
                    "updated": _iso(max(stamps) if stamps else 0.0),
                    "_updated": max(stamps) if stamps else 0.0,
                }
            )
        out.sort(key=lambda c: c["_updated"], reverse=True)
        for c in out:
            del c["_updated"]
        return out

    def has_conversation(self, conversation_id: str) -> bool:
        """Whether a conversation of this id is stored."""
        return self._one("SELECT 1 FROM conversations WHERE id=?", (conversation_id,)) is not None

    def open_conversation(self, conversation_id: str) -> bool:
        """Make a stored conversation the current one (the next turn continues it); False if unknown."""
        if not self.has_conversation(conversation_id):
            return False
        self._run("INSERT OR REPLACE INTO meta (key, value) VALUES ('conversation', ?)", (conversation_id,))
        return True

    def delete_conversation(self, conversation_id: str) -> bool:
        """Delete a conversation with its messages, turns and compactions; False if unknown. When it was
        the current one, the next turn starts a new conversation."""
        if not self.has_conversation(conversation_id):
            return False
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("messages", "turns", "compactions"):
                    db.execute(f"DELETE FROM {table} WHERE conversation_id=?", (conversation_id,))
                db.execute("DELETE FROM conversations WHERE id=?", (conversation_id,))
                db.execute("DELETE FROM meta WHERE key='conversation' AND value=?", (conversation_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return True

    def compactions(self, conversation_id: str) -> list[Compaction]:
        """The conversation's compactions (history ranges sent as a summary), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT first, last, summary FROM compactions WHERE conversation_id=? ORDER BY id", (conversation_id,)
            ).fetchall()
        out = []
        for first, last, summary in rows:
            if isinstance(first, int) and isinstance(last, int) and isinstance(summary, str):
                out.append(Compaction(first, last, summary))
        return out

    def add_compaction(self, conversation_id: str, compaction: Compaction) -> None:
        """Record that a history range is sent as a summary from now on (the messages themselves stay)."""
        self._run(
            "INSERT INTO compactions (conversation_id, first, last, summary, created) VALUES (?, ?, ?, ?, ?)",
            (conversation_id, compaction.start, compaction.end, redact(compaction.summary), time.time()),
        )

    def conversation_usage(self, conversation_id: str) -> Usage:
        """The tokens and cost of every turn of a conversation, as their summaries recorded them."""
        total = Usage()
        for _, _, summary, _, _ in self._turn_summaries(conversation_id):
            total = total + _summary_usage(summary)
        return total


TITLE_CHARS = 80


def title_of(prompt: str) -> str:
    """A conversation's title: its first prompt's first non-empty line, cut to TITLE_CHARS (no model call)."""
    line = next((x.strip() for x in prompt.splitlines() if x.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def _summary_usage(summary: str | None) -> Usage:
    """The usage a stored turn summary records; a turn that recorded none (it ran before usage was
    kept, or did not finish) counts as no tokens."""
    try:
        data = json.loads(summary) if summary else None
    except (TypeError, ValueError):
        data = None
    usage = data.get("usage") if isinstance(data, dict) else None
    return Usage.from_dict(usage) if isinstance(usage, dict) else Usage()


def stored_state_file(root: Path) -> Path | None:
    """The workspace's existing state file, in .forge/ or in the user's fallback folder
    (user_state_dir), or None when nothing is stored; it creates no folder."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "forge-lsp" / "workspaces"
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    for path in (root / STATE_DIR / STATE_FILE, base / f"{root.name or 'root'}-{key}" / STATE_FILE):
        with contextlib.suppress(OSError):
            if path.is_file():
                return path
    return None
