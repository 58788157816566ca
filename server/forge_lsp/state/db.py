"""Opening a state database: its schema, the checks before anything is written, and how a
message is stored in a row.

A state file that is not one of ours raises DamagedState (RefusedState when it holds SQL we
never create, a trigger or a view); the caller moves it aside.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forge_lsp.domain.messages import ChatMessage
from forge_lsp.redact import redact_data

log = logging.getLogger(__name__)

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
CREATE TABLE IF NOT EXISTS turn_files (
  turn_id TEXT NOT NULL,
  path TEXT NOT NULL,
  previous BLOB,
  digest TEXT,
  seq INTEGER NOT NULL,
  undone REAL,
  PRIMARY KEY (turn_id, path)
);
"""

COLUMNS = {
    "conversations": ["id", "created"],
    "messages": ["id", "conversation_id", "turn_id", "data", "created"],
    "turns": ["id", "conversation_id", "prompt", "status", "summary", "started", "ended"],
    "meta": ["key", "value"],
    "compactions": ["id", "conversation_id", "first", "last", "summary", "created"],
    "processes": ["pid", "pgid", "boot_id", "started", "cmdline", "uid", "server", "server_started"],
    "turn_files": ["turn_id", "path", "previous", "digest", "seq", "undone"],
}
"""turn_files: each file a turn changed, its content before the turn's first change (NULL: it did not exist)
and the digest of what the turn left (NULL: removed); forge.undoTurn reads them (core/turn_undo.py)."""


class DamagedState(Exception):
    """A state file that is not a usable forge-lsp database."""


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
