"""[[hooks]] entries read from a config file: each entry checked alone and reported at its line.

A config file's hooks are an array of tables:

    [[hooks]]
    event = "pre_tool"
    matcher = "patch|write"
    command = "python3 .forge/hooks/check.py"
    timeout_secs = 30

or, where the same file sets [hooks] max_stop_blocks (TOML has no table that is also an array), one array per
event under [hooks]: ``[[hooks.pre_tool]]``, ``[[hooks.post_tool]]``, ``[[hooks.stop]]``. A bad entry (an unknown
event, no command, a matcher that is not a pattern) is dropped alone with a problem at its line; the file's other
entries and keys apply. The domain checks nothing of this (domain/config.py refuses hooks from any layer but the
files): its matchers' regular expressions are RE2's (patterns.py), which the domain may not import.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import MCP_PREFIX
from forge_lsp.domain.hooks import (
    CLAUDE_EVENTS,
    CLAUDE_TOOLS,
    DEFAULT_TIMEOUT_SECS,
    HOOK_EVENTS,
    STOP,
    Hook,
    anchored,
    matches_every_tool,
    name_alternatives,
)
from forge_lsp.domain.tool_catalog import TOOL_NAMES
from forge_lsp.patterns import UnsafePattern, compile_pattern

FIELDS = ("event", "matcher", "command", "timeout_secs")
SETTINGS = ("max_stop_blocks",)
"""The [hooks] table's own keys (domain/config.py's rows), left for the config's check."""
Problem = tuple[str, str, int | None]
"""(key, why, line)"""

_ENTRY_HEADER = re.compile(r"^\s*\[\[\s*(hooks(?:\s*\.\s*[A-Za-z_]+)?)\s*\]\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


class _Lines:
    """Where each [[hooks]] (or [[hooks.<event>]]) entry starts in the file's text, and its keys' lines."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers: dict[str, list[int]] = {}
        for n, line in enumerate(self.lines, 1):
            if m := _ENTRY_HEADER.match(line):
                self.headers.setdefault(re.sub(r"\s+", "", m.group(1)), []).append(n)

    def first(self, pattern: str) -> int | None:
        """The first line that matches pattern (an inline array's assignment)."""
        regex = re.compile(pattern)
        return next((n for n, line in enumerate(self.lines, 1) if regex.match(line)), None)

    def entry(self, table: str, index: int, count: int) -> int | None:
        """The line of entry index (0-based) of table's count entries: its header, or the inline array's line."""
        found = self.headers.get(table, [])
        if len(found) == count:
            return found[index]
        last = table.rsplit(".", 1)[-1]
        return self.first(rf"^\s*{re.escape(last)}\s*=") or self.first(rf"^\s*\[\s*{re.escape(table)}\s*\]")

    def field(self, start: int | None, name: str) -> int | None:
        """The line of name = ... in the entry whose header is at start (the header itself if not found)."""
        if start is None:
            return None
        for n in range(start + 1, len(self.lines) + 1):
            line = self.lines[n - 1]
            if _ANY_HEADER.match(line):
                break
            if re.match(rf"^\s*{re.escape(name)}\s*=", line):
                return n
        return start


def take_hooks(
    table: dict[str, Any], text: str, source: str, path: Path
) -> tuple[dict[str, Any], tuple[Hook, ...] | None, list[Problem]]:
    """The file's table less its hook entries, the good entries (None: the file has none), and one problem per
    bad entry or key, at its line."""
    raw = table.get("hooks")
    if raw is None:
        return table, None, []
    lines = _Lines(text)
    problems: list[Problem] = []
    rest = dict(table)
    groups: list[tuple[str, str | None, Any]] = []  # (table name, the event it implies, its entries)
    if isinstance(raw, list):
        del rest["hooks"]
        groups.append(("hooks", None, raw))
    elif isinstance(raw, Mapping):
        claude = {v: k for k, v in CLAUDE_EVENTS.items()}
        for name in raw:
            if name in claude:  # Claude Code's settings.json shape pasted in: said in forge's words
                why = f"{name} is Claude Code's name; forge's hooks are [[hooks.{claude[name]}]] tables (event, matcher, command)"
                problems.append(
                    (
                        f"hooks.{name}",
                        why,
                        lines.first(rf"^\s*\[*\s*hooks\s*\.\s*{name}\b") or lines.first(r"^\s*\[\s*hooks\s*\]"),
                    )
                )
        kept = {k: v for k, v in raw.items() if k not in HOOK_EVENTS and k not in claude}
        for name in HOOK_EVENTS:
            if name in raw:
                groups.append((f"hooks.{name}", name, raw[name]))
        rest["hooks"] = kept
        if not kept:
            del rest["hooks"]
    else:
        del rest["hooks"]
        line = lines.first(r"^\s*hooks\s*=")
        problems.append(("hooks", "expected [[hooks]] tables (event, matcher, command, timeout_secs), got " + _kind(raw), line))
        return rest, (), problems
    if not groups:
        return rest, None, problems
    hooks: list[Hook] = []
    for name, event, entries in groups:
        if not isinstance(entries, list):
            problems.append((name, f"expected [[{name}]] tables, got {_kind(entries)}", lines.entry(name, 0, 1)))
            continue
        for index, entry in enumerate(entries):
            start = lines.entry(name, index, len(entries))
            hook = _entry(entry, event, f"{name}[{index + 1}]", start, lines, problems)
            if hook is not None:
                hooks.append(Hook(**hook, source=source, path=str(path), line=start))
    hooks.sort(key=lambda h: h.line or 0)  # in the file's order, whatever table they were written in
    return rest, tuple(hooks), problems


def _entry(
    entry: Any, implied: str | None, key: str, start: int | None, lines: _Lines, problems: list[Problem]
) -> dict[str, Any] | None:
    """One entry's fields, or None when it cannot apply (each reason a problem)."""
    if not isinstance(entry, Mapping):
        problems.append((key, f"a hook is a table (event, matcher, command, timeout_secs), got {_kind(entry)}", start))
        return None
    bad = False

    def refuse(name: str, why: str) -> None:
        nonlocal bad
        bad = True
        problems.append((f"{key}.{name}", f"{why}; this hook is ignored", lines.field(start, name)))

    for name in entry:
        if name not in FIELDS:
            close = difflib.get_close_matches(str(name), FIELDS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else f" (a hook has {', '.join(FIELDS)})"
            problems.append((f"{key}.{name}", f"unknown key{hint}", lines.field(start, str(name))))
    event = entry.get("event", implied)
    if implied is not None and "event" in entry and entry["event"] != implied:
        refuse("event", f"{entry['event']!r} in [[hooks.{implied}]], whose entries are {implied} hooks")
    elif event is None:
        refuse("event", f"missing: say when it runs, event = {' | '.join(map(repr, HOOK_EVENTS))}")
    elif event not in HOOK_EVENTS:
        claude = {v: k for k, v in CLAUDE_EVENTS.items()}.get(event) if isinstance(event, str) else None
        close = difflib.get_close_matches(event, HOOK_EVENTS, n=1, cutoff=0.6) if isinstance(event, str) else []
        hint = (
            f" ({event} is Claude Code's name; forge's is {claude!r})"
            if claude
            else f" (did you mean {close[0]!r}?)"
            if close
            else ""
        )
        refuse("event", f"expected one of {', '.join(map(repr, HOOK_EVENTS))}, got {_kind(event)}{hint}")
    command = entry.get("command")
    if command is None:
        refuse("command", "missing: the program to run (a shell command line)")
    elif not isinstance(command, str) or not command.strip():
        refuse("command", f"expected a shell command line, got {_kind(command)}")
    matcher = _matcher(entry.get("matcher"), event, refuse)
    timeout = entry.get("timeout_secs", DEFAULT_TIMEOUT_SECS)
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        refuse("timeout_secs", f"expected an integer (seconds), got {_kind(timeout)}")
    elif timeout < 1:
        refuse("timeout_secs", f"must be >= 1, got {timeout}")
    if bad or matcher is None:
        return None
    return {"event": event, "command": command, "matcher": matcher, "timeout_secs": timeout}


def _matcher(value: Any, event: Any, refuse: Any) -> tuple[str, ...] | None:
    """The matcher's patterns (() for every tool), or None after refusing it."""
    if value is None:
        return ()
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        refuse("matcher", f"expected tool names, a glob or a regular expression (a string or a list of them), got {_kind(value)}")
        return None
    if all(matches_every_tool(p) for p in patterns):
        return ()
    if event == STOP:
        refuse("matcher", "a stop hook runs at the end of every turn: it has no matcher")
        return None
    for pattern in patterns:
        names = name_alternatives(pattern)
        if names is not None:
            claude = [n for n in names if n in CLAUDE_TOOLS]
            if claude:
                said = ", ".join(f"{n} is {CLAUDE_TOOLS[n]}" for n in claude)
                refuse("matcher", f"{pattern!r} names Claude Code's tools; forge's tool names differ ({said})")
                return None
            # A name no tool has (a typo: "raed") would leave the hook never running, unseen.
            unknown = [n for n in names if not any(c in n for c in "*?") and n not in TOOL_NAMES and not n.startswith(MCP_PREFIX)]
            if unknown:
                close = difflib.get_close_matches(unknown[0], TOOL_NAMES, 1)
                hint = (
                    f"did you mean {close[0]!r}?"
                    if close
                    else f"forge's tools: {', '.join(TOOL_NAMES)}; MCP tools: mcp_<server>_<tool>"
                )
                refuse("matcher", f"{pattern!r} names no tool forge has: {', '.join(map(repr, unknown))} ({hint})")
                return None
            continue
        try:
            compile_pattern(pattern)  # its own error first: the anchored form's would quote what the user did not write
            compile_pattern(anchored(pattern))
        except UnsafePattern as exc:
            refuse("matcher", f"{pattern!r} is not a regular expression forge can use: {exc}")
            return None
    return tuple(p.strip() if name_alternatives(p) is not None else p for p in patterns)


def _kind(v: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "a list", dict: "a table"}
    return names.get(type(v), type(v).__name__) + (f" ({v!r})" if isinstance(v, bool | int | float | str) else "")
