"""The state store: conversations, their messages and turns, for one workspace.

Opening never raises: a state file that cannot be used is moved aside, and an
unregistered one in an untrusted workspace is left as it is (the state then lives in
the user's state folder); a -wal or -journal beside it that this user's forge-lsp did not
write is set aside unread (see state.wal); the process groups a killed server left running
are reaped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from forge_lsp.domain.messages import ChatMessage, Compaction, Usage
from forge_lsp.redact import redact, redact_data
from forge_lsp.state.db import DamagedState, RefusedState, _messages, _open, _stored
from forge_lsp.state.dirs import (
    SIDE_FILES,
    STATE_DIR,
    STATE_FILE,
    _unsafe_file,
    ensure_state_dir,
    move_aside,
    set_aside,
    user_state_dir,
)
from forge_lsp.state.liveness import _stat_fields, ancestors, boot_id, cmdline, may_signal, start_time
from forge_lsp.state.lock import LOCK_FILE, TurnLock
from forge_lsp.state.registry import ID_KEY, StateRegistry, _state_id
from forge_lsp.state.wal import foreign_logs, opened, side, wal_header

log = logging.getLogger(__name__)

INTERRUPTED_RESULT = "the tool call did not finish: the server stopped before it returned"

Notify = Callable[[str], None]


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
        self._wal: str | None = None
        with self.registry.lock():
            self.path, self._db = self._connect(root.resolve())
            self._register()
            self._record_wal()
        opened(self.path, True)
        self._counted = True
        self.turn_lock = TurnLock(self.path.with_name(LOCK_FILE) if self.path.name == STATE_FILE else None)
        if self.turn_lock.acquire("(opening the state)") is None:
            # No turn runs anywhere: one marked running ended when its server died.
            self._run("UPDATE turns SET status='failed', ended=? WHERE status='running'", (time.time(),))
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
            with self._writing() as db:
                db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (ID_KEY, uuid.uuid4().hex))
                # A write at every open: a -wal this session begins is begun and recorded now, before
                # anything of value is in it (see state.wal).
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('opened', ?)", (str(time.time()),))
                sid = db.execute("SELECT value FROM meta WHERE key=?", (ID_KEY,)).fetchone()[0]
                # Into the main file now: another server reads the id from it without touching the -wal.
                db.execute("PRAGMA wal_checkpoint(PASSIVE)")
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

    def _set_aside_foreign_logs(self, path: Path) -> None:
        """Set aside the -wal / -journal beside path that this user's forge-lsp did not write: sqlite
        would replay it into the file on opening (see state.wal)."""
        sides = foreign_logs(path, self.registry.known_wal(path))
        if not sides:
            return
        moved = set_aside(path, sides, "refused")
        logs = [side(path, s) for s in sides if s != "-shm"]
        was, it = ("were", "them") if len(logs) > 1 else ("was", "it")
        self._say(
            f"forge-lsp: {' and '.join(map(str, logs))} beside your state file {was} not written by your forge-lsp "
            f"(it may have come with the repository), so {it} {was} not applied to your conversations; moved {it} to "
            f"{' and '.join(str(m) for m in moved if not m.name.endswith('-shm'))}"
        )

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
            self._set_aside_foreign_logs(path)
            existed = os.path.lexists(path)
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
            # (A file created just now has no id yet: the registry's entry is an earlier file's, deleted
            # since, and _register records the new one.)
            if not self.trusted and not self.fallback and path.parent == root / STATE_DIR and existed:
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
            self._run("DELETE FROM processes WHERE pid=?", (row.get("pid"),))
        return killed

    def watch_process(self, pid: int, running: bool, argv: Sequence[str] | None = None) -> None:
        """Record a child process group while it runs (see _reap_orphans), with what proves it is ours: argv,
        the command line it was started with (read from /proc when not given; that is racy while a shell
        execs its one command in place: empty, or either program's)."""
        if running:
            fields = _stat_fields(pid)
            argv = cmdline(pid) if argv is None else list(argv)
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
            if self._counted:
                opened(self.path, False)
                self._counted = False

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return row[0] if row else None

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._writing() as db:
            cur = db.execute(sql, args)
            return int(cur.lastrowid or 0)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """A write to the state file, then the -wal header it leaves recorded: after a crash, the next
        start finds the log recorded as ours (a server opening the file meanwhile finds it held open;
        see state.wal)."""
        with self._lock:
            try:
                yield self._db
            finally:
                self._record_wal()

    def _record_wal(self) -> None:
        """Record the -wal header in the registry when a write restarted the log (a new header)."""
        if self.path.name != STATE_FILE:
            return
        header = wal_header(self.path)
        if header is None or header == self._wal:
            return
        try:
            self.registry.record_wal(self.path, header)
            self._wal = header
        except OSError as exc:
            log.warning("state: could not record the -wal of %s (%s); it will be set aside after a crash", self.path, exc)

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

    def conversation_agent(self, conversation_id: str) -> str | None:
        """The agent the conversation's turns use (forge.setAgent, ACP's session/set_mode); None: the default."""
        value = self._one("SELECT value FROM meta WHERE key=?", (f"agent:{conversation_id}",))
        return str(value) if value else None

    def set_conversation_agent(self, conversation_id: str, agent_id: str) -> None:
        """Record the conversation's agent (kept with it, as its messages are)."""
        self._run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"agent:{conversation_id}", agent_id))

    def delete_conversation(self, conversation_id: str) -> bool:
        """Delete a conversation with its messages, turns and compactions; False if unknown. When it was
        the current one, the next turn starts a new conversation."""
        if not self.has_conversation(conversation_id):
            return False
        with self._writing() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                # The snapshots forge.undoTurn would restore go with the turns (state/turn_files.py).
                db.execute(
                    "DELETE FROM turn_files WHERE turn_id IN (SELECT id FROM turns WHERE conversation_id=?)", (conversation_id,)
                )
                for table in ("messages", "turns", "compactions"):
                    db.execute(f"DELETE FROM {table} WHERE conversation_id=?", (conversation_id,))
                db.execute("DELETE FROM conversations WHERE id=?", (conversation_id,))
                db.execute("DELETE FROM meta WHERE key='conversation' AND value=?", (conversation_id,))
                db.execute("DELETE FROM meta WHERE key=?", (f"agent:{conversation_id}",))
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
    found = Usage.from_dict(usage) if isinstance(usage, dict) else Usage()
    # A turn that got no reply (it failed or was cancelled first) recorded no tokens and an unknown cost:
    # it cost nothing known, and leaves the conversation's known cost as it is.
    return Usage() if found.total_tokens == 0 and found.cost is None else found
