"""The turn_files table: each file a turn changed, what it held before the turn's first change and the
digest of what the turn left there, for forge.undoTurn (core/turn_undo.py).

A row is written before the tool's change (the content it had) and updated after it (the digest of
what was written), so a turn cancelled midway, or a server killed in it, is still undoable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge_lsp.state.store import StateStore

KEEP_TURNS = 50
"""The snapshots of the last KEEP_TURNS turns that changed files are kept; older ones are dropped."""

CREATED, CHANGED, REMOVED = "created", "changed", "removed"


@dataclass(frozen=True)
class TurnFile:
    """One file a turn changed: path relative to the root; previous None when the turn created it; digest
    (of what the turn left) None when the turn removed it."""

    path: str
    previous: bytes | None
    digest: str | None
    undone: float | None = None

    @property
    def action(self) -> str:
        """What the turn did to the file: created, changed or removed."""
        if self.previous is None:
            return CREATED
        return REMOVED if self.digest is None else CHANGED


class TurnFiles:
    """The turn_files rows of a workspace's state store."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def first_change(self, turn_id: str, path: str, previous: bytes | None, digest: str | None) -> None:
        """Record path's content before turn_id's first change to it (digest: of that same content, until the
        change is made); a later call for the same turn and path changes nothing (the first content stays)."""
        seq = (self.store._one("SELECT MAX(seq) FROM turn_files") or 0) + 1
        self.store._run(
            "INSERT OR IGNORE INTO turn_files (turn_id, path, previous, digest, seq) VALUES (?, ?, ?, ?, ?)",
            (turn_id, path, previous, digest, seq),
        )

    def left(self, turn_id: str, path: str, digest: str | None) -> None:
        """What the turn left in path now (None: removed)."""
        self.store._run("UPDATE turn_files SET digest=? WHERE turn_id=? AND path=?", (digest, turn_id, path))

    def forget(self, turn_id: str, path: str) -> None:
        """The turn left path as it was before its first change (an edit refused, or undone): nothing to undo there."""
        self.store._run("DELETE FROM turn_files WHERE turn_id=? AND path=?", (turn_id, path))

    def files(self, turn_id: str) -> list[TurnFile]:
        """The files turn_id changed, in the order it first changed them (none: unknown turn, or it changed none)."""
        with self.store._lock:
            rows = self.store._db.execute(
                "SELECT path, previous, digest, undone FROM turn_files WHERE turn_id=? ORDER BY seq", (turn_id,)
            ).fetchall()
        return [
            TurnFile(str(path), bytes(previous) if previous is not None else None, _text(digest), _number(undone))
            for path, previous, digest, undone in rows
            if isinstance(path, str)
        ]

    def last_turn(self) -> str | None:
        """The workspace's last turn that changed files (undone or not), or None."""
        value = self.store._one("SELECT turn_id FROM turn_files ORDER BY seq DESC LIMIT 1")
        return str(value) if value is not None else None

    def mark_undone(self, turn_id: str) -> None:
        """The turn was undone: a second undo says so."""
        self.store._run("UPDATE turn_files SET undone=? WHERE turn_id=?", (time.time(), turn_id))

    def by_conversation(self) -> dict[str, list[dict[str, object]]]:
        """For forge.listConversations: conversation id -> [{turnId, files: [{path, action}], undone}], in order."""
        with self.store._lock:
            rows = self.store._db.execute(
                "SELECT t.conversation_id, f.turn_id, f.path, f.previous IS NULL, f.digest IS NULL, f.undone "
                "FROM turn_files f JOIN turns t ON t.id = f.turn_id ORDER BY f.seq"
            ).fetchall()
        out: dict[str, list[dict[str, object]]] = {}
        turns: dict[str, dict[str, object]] = {}
        for cid, turn_id, path, created, removed, undone in rows:
            entry = turns.get(turn_id)
            if entry is None:
                entry = turns[turn_id] = {"turnId": str(turn_id), "files": [], "undone": undone is not None}
                out.setdefault(str(cid), []).append(entry)
            action = CREATED if created else REMOVED if removed else CHANGED
            entry["files"].append({"path": str(path), "action": action})  # type: ignore[attr-defined]
        return out

    def prune(self, keep: int = KEEP_TURNS) -> None:
        """Drop the snapshots of all but the last `keep` turns that changed files."""
        self.store._run(
            "DELETE FROM turn_files WHERE turn_id NOT IN "
            "(SELECT turn_id FROM turn_files GROUP BY turn_id ORDER BY MAX(seq) DESC LIMIT ?)",
            (keep,),
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None
