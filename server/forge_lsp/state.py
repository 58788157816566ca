"""Conversation state in SQLite (.forge/state.sqlite3, WAL): a restarted server resumes."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from forge_lsp.domain.messages import ChatMessage
from forge_lsp.tools.process import kill_orphan, start_time

STATE_DIR = ".forge"
STATE_FILE = "state.sqlite3"
INTERRUPTED_RESULT = "the tool call did not finish: the server stopped before it returned"

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
CREATE TABLE IF NOT EXISTS processes (pid INTEGER PRIMARY KEY, started TEXT NOT NULL, server INTEGER NOT NULL);
"""


def ensure_state_dir(root: Path) -> Path:
    """.forge/ in the workspace, with a .gitignore that keeps it out of git."""
    folder = root / STATE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return folder


class StateStore:
    """Conversations, their messages (appended one by one) and turns, for one workspace."""

    def __init__(self, root: Path) -> None:
        self.path = ensure_state_dir(root) / STATE_FILE
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        # A turn that was running when the last server died ended then.
        self._db.execute("UPDATE turns SET status='failed', ended=? WHERE status='running'", (time.time(),))
        self._reap_orphans()

    def _reap_orphans(self) -> int:
        """Kill the process groups (shell commands) that a server killed mid-turn left running."""
        killed = 0
        rows = self._db.execute("SELECT pid, started, server FROM processes").fetchall()
        for pid, started, server in rows:
            if server != os.getpid() and start_time(server) is None:
                killed += kill_orphan(int(pid), str(started))
                self._db.execute("DELETE FROM processes WHERE pid=?", (pid,))
        return killed

    def watch_process(self, pid: int, running: bool) -> None:
        """Record a child process group while it runs (see _reap_orphans)."""
        if running:
            started = start_time(pid)
            if started is not None:
                self._run("INSERT OR REPLACE INTO processes (pid, started, server) VALUES (?, ?, ?)", (pid, started, os.getpid()))
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

    def append(self, conversation_id: str, turn_id: str | None, message: ChatMessage) -> int:
        """Append one message; returns its row id (for update)."""
        return self._run(
            "INSERT INTO messages (conversation_id, turn_id, data, created) VALUES (?, ?, ?, ?)",
            (conversation_id, turn_id, json.dumps(message.to_dict()), time.time()),
        )

    def update(self, row_id: int, message: ChatMessage) -> None:
        """Replace a stored message (a tool result that got its retry notice)."""
        self._run("UPDATE messages SET data=? WHERE id=?", (json.dumps(message.to_dict()), row_id))

    def history(self, conversation_id: str) -> list[ChatMessage]:
        """Every message of a conversation, in order, with unanswered tool calls closed.

        A server killed mid-batch leaves tool calls without results; providers
        reject such a history, so each gets an error result saying so.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT data FROM messages WHERE conversation_id=? ORDER BY id", (conversation_id,)
            ).fetchall()
        messages = [ChatMessage.from_dict(json.loads(r[0])) for r in rows]
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
            (turn_id, conversation_id, prompt, time.time()),
        )

    def finish_turn(self, turn_id: str, status: str, summary: dict[str, Any]) -> None:
        """Record how a turn ended."""
        self._run(
            "UPDATE turns SET status=?, summary=?, ended=? WHERE id=?",
            (status, json.dumps(summary), time.time(), turn_id),
        )

    def turn_status(self, turn_id: str) -> str | None:
        """A turn's status, or None if unknown."""
        value = self._one("SELECT status FROM turns WHERE id=?", (turn_id,))
        return str(value) if value is not None else None
