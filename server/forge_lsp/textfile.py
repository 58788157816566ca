"""A small text file of the user's or the workspace's (a config, an mcp.json, an agent or a command), read with care.

Only a regular file is read (a FIFO or a device would block the read forever), at most max_bytes of it
(a file that grew since it was looked at is not read whole), only UTF-8 text, and a workspace's file only
inside the workspace (a link to ~/.ssh/… or /dev/zero is not followed out). Callers turn the
reasons into their own problem reports.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class Unusable(ValueError):
    """The file is there but cannot be used: why, in words a person understands."""


def read_text(path: Path, max_bytes: int, inside: Path | None = None) -> str | None:
    """path's text; None when there is no such file.

    Unusable when it is not a regular file, is over max_bytes, is not UTF-8, or (inside given: a workspace's
    file) resolves outside that folder; OSError when it cannot be opened or read (permissions, a loop of links)."""
    try:
        if inside is not None and os.path.lexists(path):
            real = path.resolve()
            if not real.is_relative_to(inside.resolve()):
                raise Unusable(f"it points outside the workspace ({real}): not read")
        info = path.stat()  # before opening: a device is never opened (opening some has effects)
        _check(info, max_bytes)
        # O_NONBLOCK: a FIFO put in the file's place since opens at once (and is refused below), never blocks.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        _check(os.fstat(fd), max_bytes)
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Unusable(f"over the {max_bytes}-byte limit")
    try:
        # Bytes, decoded here: text mode would turn a bare CR into a newline.
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unusable(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _check(info: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise Unusable("not a regular file")
    if info.st_size > max_bytes:
        raise Unusable(f"{info.st_size} bytes, over the {max_bytes}-byte limit")
