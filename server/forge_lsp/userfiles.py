"""The user's own small JSON stores (trust decisions, the state registry): read with care, written atomically."""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def private_dir(folder: Path) -> bool:
    """The folder is ours: owned by this user, writable by no one else."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_table(path: Path, key: str, max_bytes: int, what: str, otherwise: str) -> dict[str, Any] | None:
    """The ``key`` table of the JSON object at path; {} when the file is absent or cannot count
    (another user's file, a link, one over max_bytes, unreadable: logged as "<what> <path> ...;
    <otherwise>"), None when the object has no such table."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning("%s %s: %s; %s", what, path, exc, otherwise)
        return {}
    # Another user's file, a link or a huge file is not a decision of this user's.
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > max_bytes:
        log.warning("%s %s is not a regular file of this user's; %s", what, path, otherwise)
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("%s %s is unreadable (%s); %s", what, path, exc, otherwise)
        return {}
    table = data.get(key) if isinstance(data, dict) else None
    return table if isinstance(table, dict) else None


def write_json(path: Path, data: dict[str, Any], prefix: str) -> None:
    """Replace path with data, atomically, 0600 (a temporary file named prefix* beside it)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps(data, indent=1, sort_keys=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
