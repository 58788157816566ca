"""The names the model sees: mcp_<server>_<tool>, sanitized to ^[a-zA-Z0-9_-]{1,64}$, clashes resolved deterministically."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """mcp_<server>_<tool> with every other character made '_'; a longer one cut, with a hash of the whole kept."""
    name = _BAD.sub("_", f"mcp_{server}_{tool}")
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def assign(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A unique name for each (server, tool): in sorted order, a name already taken gets _2, _3, ... (cut to fit)."""
    taken: set[str] = set()
    out: dict[tuple[str, str], str] = {}
    for server, tool in sorted(set(pairs)):
        base = tool_name(server, tool)
        name, n = base, 1
        while name in taken:
            n += 1
            suffix = f"_{n}"
            name = base[: MAX_NAME - len(suffix)] + suffix
        taken.add(name)
        out[(server, tool)] = name
    return out
