"""What /proc says about a process, and whether a recorded one may be signalled.

The processes table of a state file names process groups to kill after a crash;
the state file is untrusted input, so may_signal checks every recorded fact
against /proc: nothing read from it can make the server signal a process it did
not start on this boot.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from forge_lsp.redact import redact

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


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
