"""Undo a turn: what each turn's file tools changed is recorded (TurnChanges, into state/turn_files.py)
and forge.undoTurn puts every file back as it was before the turn (undo_turn), all or nothing.

A file the user (or anything else) changed since the turn is never overwritten: the undo is refused,
naming it, and nothing is restored. "Changed since" compares the file now (the editor's buffer when
open, else the disk) with the digest of what the turn left there.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge_lsp.state.turn_files import TurnFile, TurnFiles
from forge_lsp.tools.base import ENCODING_ERRORS, ChangedSince, DiskFiles, FileStore, ToolFailure, kind_of
from forge_lsp.tools.workspace import GitExecutes, PathOutsideWorkspace, Workspace

log = logging.getLogger(__name__)

MAX_COMPARED_BYTES = 256 * 1024 * 1024
"""A file larger than this is not read to compare: it is not what a turn left (seen as changed)."""


def encode(text: str) -> bytes:
    """File text as the bytes on disk (bytes that were not UTF-8 kept, see tools.base.ENCODING_ERRORS)."""
    return text.encode("utf-8", ENCODING_ERRORS)


def digest(data: str | bytes | None) -> str | None:
    """What a file holds, as a digest (None: it does not exist).

    One final newline is left out: an editor that adds one to a buffer it sends (Neovim's 'eol') does
    not make the file count as changed."""
    if data is None:
        return None
    raw = encode(data) if isinstance(data, str) else data
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    return hashlib.sha256(raw).hexdigest()


def _exact(text: str | None) -> str | None:
    """A digest of every byte (the final newline too)."""
    return None if text is None else hashlib.sha256(encode(text)).hexdigest()


class TurnChanges:
    """The change log of one turn (tools.base.ChangeLog): each file's content before the turn first changed
    it, and the digest of what it holds after each change. A record that cannot be written is logged; the
    tool's change goes on (that file is then not restored by an undo)."""

    def __init__(self, table: TurnFiles, workspace: Workspace, turn_id: str) -> None:
        self.table = table
        self.workspace = workspace
        self.turn_id = turn_id
        self._first: dict[Path, str | None] = {}
        """Each recorded file's digest before the turn's first change to it."""

    def before(self, path: Path, previous: str | None) -> None:
        if path in self._first:
            return
        try:
            self.table.first_change(
                self.turn_id, self.workspace.relative(path), encode(previous) if previous is not None else None, digest(previous)
            )
            self._first[path] = _exact(previous)
        except (sqlite3.Error, OSError) as exc:
            log.warning("turn %s: cannot record %s for undo: %s", self.turn_id, path, exc)

    def after(self, path: Path, content: str | None) -> None:
        if path not in self._first:
            return
        try:
            if _exact(content) == self._first[path]:  # as before the turn (a refused edit, a change undone): nothing to undo
                self.table.forget(self.turn_id, self.workspace.relative(path))
                del self._first[path]
            else:
                self.table.left(self.turn_id, self.workspace.relative(path), digest(content))
        except (sqlite3.Error, OSError) as exc:
            log.warning("turn %s: cannot record %s for undo: %s", self.turn_id, path, exc)

    def recorded(self) -> list[Path]:
        return list(self._first)


class UndoRefused(Exception):
    """forge.undoTurn that restores nothing: already undone, nothing to undo, or files changed since (named)."""

    def __init__(self, message: str, files: list[str] | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.files = files or []
        self.detail = detail
        """The whole cause, for the log, where the message is kept short (a restore that failed midway)."""


class UnknownTurn(Exception):
    """No turn of that id in this workspace."""


def describe(files: list[TurnFile]) -> str:
    """The files a turn touched, one Markdown list item each: "- created a.py"."""
    return "".join(f"- {f.action} {f.path}\n" for f in files)


@dataclass
class _Plan:
    """One file of an undo: where it is, what it holds now (to put back if a later file fails), what it gets."""

    file: TurnFile
    path: Path
    now: str | None
    on_disk: bool


async def _now(path: Path, rel: str, files: FileStore) -> tuple[str | None, bool]:
    """What path holds now (the editor's buffer when open, else the disk; None: missing) and whether the disk has it."""
    on_disk = os.path.lexists(path)
    buffered = await files.read_text(path)
    if buffered is not None:
        return buffered, on_disk
    if not on_disk:
        return None, False
    return (await asyncio.to_thread(_disk_text, path, rel)), True


def _disk_text(path: Path, rel: str) -> str:
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ToolFailure(f"{rel} is {kind_of(info.st_mode)} now")
    if info.st_size > MAX_COMPARED_BYTES:
        raise ToolFailure(f"{rel} is {info.st_size} bytes now")
    with open(path, "rb") as fh:
        return fh.read(MAX_COMPARED_BYTES + 1).decode("utf-8", ENCODING_ERRORS)


def _unchanged(file: TurnFile, now: str | None, on_disk: bool) -> bool:
    """Whether the file is as the turn left it."""
    if file.digest is None:  # the turn removed it: an editor may still show the buffer it had
        return not on_disk
    return digest(now) == file.digest


async def undo_turn(table: TurnFiles, workspace: Workspace, files: FileStore, turn_id: str, known: bool) -> list[dict[str, Any]]:
    """Put back every file turn_id changed: [{path, action: restored|removed|recreated}] (a file already as it
    was before the turn is left out). known: whether the turn is in the store (else UnknownTurn).

    UndoRefused, restoring nothing, when it was undone already, changed no file, or a file changed since the
    turn (named; the user's work is kept) or can no longer be written (outside the workspace now, git's)."""
    recorded = table.files(turn_id)
    if not recorded:
        if not known:
            raise UnknownTurn(turn_id)
        raise UndoRefused(f"turn {turn_id} has no file changes to undo (it changed none, or it is older than the turns kept)")
    if any(f.undone is not None for f in recorded):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(max(f.undone or 0 for f in recorded)))
        raise UndoRefused(f"turn {turn_id} was already undone ({when})")
    plans: list[_Plan] = []
    changed: list[str] = []
    refused: list[str] = []
    for file in recorded:
        try:
            path = workspace.resolve(file.path)
            workspace.check_changeable(path)
            now, on_disk = await _now(path, file.path, files)
        except (PathOutsideWorkspace, GitExecutes, ToolFailure, OSError) as exc:
            refused.append(file.path)
            log.warning("undo of turn %s: %s: %s", turn_id, file.path, exc)
            continue
        if not _unchanged(file, now, on_disk):
            changed.append(file.path)
            continue
        plans.append(_Plan(file, path, now, on_disk))
    if changed or refused:
        raise UndoRefused(_refusal(turn_id, changed, refused), changed + refused)
    return await _restore(turn_id, plans, files)


def _refusal(
    turn_id: str, changed: list[str], refused: list[str], outcome: str = "nothing was restored, and your changes are kept"
) -> str:
    """Why the undo was refused: the files first and what became of them, the turn's id last, so that a
    message cut to one line (Neovim's notification) still names them and says nothing was lost."""
    why = []
    if changed:
        why.append(f"{', '.join(changed)} changed since the turn")
    if refused:
        why.append(f"{', '.join(refused)} cannot be written now (see the log)")
    return f"{'; '.join(why)}: cannot undo; {outcome} (turn {turn_id})"


async def _restore(turn_id: str, plans: list[_Plan], files: FileStore) -> list[dict[str, Any]]:
    """Write every plan's previous content; if one fails, put back the ones already written, and re-raise."""
    done: list[_Plan] = []
    out: list[dict[str, Any]] = []
    disk = DiskFiles()
    failed = ""
    try:
        for plan in plans:
            failed = plan.file.path
            previous = plan.file.previous
            if previous is None:
                if plan.on_disk:
                    await files.delete(plan.path)
                    out.append({"path": plan.file.path, "action": "removed"})
                    done.append(plan)
                continue
            text = previous.decode("utf-8", ENCODING_ERRORS)
            if plan.now == text and plan.on_disk:
                continue
            if not plan.on_disk:  # removed by the turn: back on disk (an editor's buffer of it alone would not be a file)
                await disk.write_text(plan.path, text)
                action = "recreated"
            else:
                await files.write_text(plan.path, text)
                action = "restored"
            out.append({"path": plan.file.path, "action": action})
            done.append(plan)
    except Exception as exc:
        stuck: list[str] = []
        for plan in reversed(done):
            try:
                if plan.now is None or not plan.on_disk:
                    if plan.path.exists():
                        await disk.delete(plan.path)
                elif not plan.path.exists():
                    await disk.write_text(plan.path, plan.now)
                else:
                    await files.write_text(plan.path, plan.now)
            except Exception as again:  # logged; the message below names it
                log.error("undo of turn %s: cannot put %s back: %s", turn_id, plan.file.path, again)
                stuck.append(plan.file.path)
        put_back = (
            f"{', '.join(stuck)} could not be put back as the turn left it"
            if stuck
            else "the files already restored were put back"
        )
        detail = f"restoring {failed} failed ({exc}); {put_back}"
        log.warning("undo of turn %s: %s", turn_id, detail)
        # Short, the file first (the whole cause is in the detail and the log): the editor did not apply the
        # edit because the user typed in the buffer is a file changed since the turn; any other failure, a
        # file that cannot be written now.
        changed, refused = ([failed], []) if isinstance(exc, ChangedSince) else ([], [failed])
        if stuck:
            message = _refusal(turn_id, changed, refused, f"{put_back} (see the log)")
        else:
            message = _refusal(turn_id, changed, refused)
        raise UndoRefused(message, [failed, *stuck], detail) from exc
    return out


def actions(files: list[TurnFile]) -> list[dict[str, str]]:
    """[{path, action}] of what a turn did (created, changed, removed)."""
    return [{"path": f.path, "action": f.action} for f in files]
