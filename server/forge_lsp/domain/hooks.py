"""The user's hooks: programs run at fixed points of a turn (before a tool call, after it, at the turn's end).

A hook is one [[hooks]] entry of the user's config.toml or a trusted workspace's .forge.toml. What it is
given on stdin is the JSON that scripts written for Claude Code's hooks read (hook_event_name, tool_name,
tool_input, tool_response, cwd, session_id), with forge's own names beside it; what its exit code means is
Claude Code's too (0 fine, 2 refuse, anything else a hook error). Pure: the entries, their matchers' forms
and the stdin payload. Running them is core/user_hooks.py's; reading them from a file is hooks_config.py's.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PRE_TOOL, POST_TOOL, STOP = "pre_tool", "post_tool", "stop"
HOOK_EVENTS = (PRE_TOOL, POST_TOOL, STOP)
"""forge's names of the points a hook runs at."""
CLAUDE_EVENTS = {PRE_TOOL: "PreToolUse", POST_TOOL: "PostToolUse", STOP: "Stop"}
"""Claude Code's name of each event: a hook's hook_event_name."""
CLAUDE_TOOLS = {
    "Edit": "patch",
    "MultiEdit": "multi_patch",
    "Write": "write",
    "Bash": "shell",
    "Read": "read",
    "Grep": "fs_search",
    "Glob": "fs_search",
    "WebFetch": "fetch",
    "TodoWrite": "todo_write",
}
"""Claude Code's tool names and forge's tool of the same work: a matcher naming the first is told the second
(docs/verify.md has the map)."""

DEFAULT_TIMEOUT_SECS = 60
"""Seconds a hook may run when its entry says nothing (Claude Code's default)."""
BLOCK = 2
"""The exit code by which a hook refuses: the call (pre_tool), its result (post_tool), the turn's end (stop)."""
MAX_MESSAGE_CHARS = 4000
"""Of a refusing hook's stderr, what the model is given (and the user shown)."""
MAX_NOTE_CHARS = 1000
"""Of a post_tool hook's stdout on exit 0, what is added to the call's result for the model."""

_NAMES = re.compile(r"^[A-Za-z0-9_*?\- |]+$")
"""A matcher made of names, globs (* ?) and alternatives (|) only; anything else is a regular expression."""


def matches_every_tool(pattern: str) -> bool:
    """Whether a matcher string matches every tool ("", "*")."""
    return pattern.strip() in ("", "*")


def name_alternatives(pattern: str) -> tuple[str, ...] | None:
    """The names or globs a matcher string stands for ("patch|write" -> patch, write; "mcp_github_*"), or None
    when it is a regular expression (matched against the whole tool name)."""
    if not _NAMES.match(pattern):
        return None
    return tuple(part.strip() for part in pattern.split("|") if part.strip())


def glob_matches(alternatives: tuple[str, ...], tool: str) -> bool:
    """Whether a tool's name is one of the names, or matches one of the globs."""
    return any(fnmatch.fnmatchcase(tool, alt) for alt in alternatives)


def anchored(pattern: str) -> str:
    """A matcher's regular expression as one that must match the whole tool name."""
    return f"^(?:{pattern})$"


@dataclass(frozen=True)
class Hook:
    """One [[hooks]] entry as it applies: when it runs, for which tools, what it runs, and where it was set."""

    event: str
    """pre_tool, post_tool or stop."""
    command: str
    """A shell command line, run in the workspace (bash -c) as the user, outside the shell tool's sandbox."""
    matcher: tuple[str, ...] = ()
    """Tool names, globs ("mcp_github_*"), alternatives ("patch|write") or regular expressions ("mcp_.*_search"),
    any of which may match; none: every tool. A stop hook has none."""
    timeout_secs: int = DEFAULT_TIMEOUT_SECS
    source: str = ""
    """The layer that set it: user or workspace."""
    path: str | None = None
    """The file that set it."""
    line: int | None = None
    """Its line in that file (1-based)."""

    def where(self) -> str:
        """Where it was set, as a person looks for it: FILE:LINE."""
        if self.path is None:
            return self.source or "?"
        return f"{self.path}:{self.line}" if self.line else self.path

    def label(self) -> str:
        """The command as one short line, for messages."""
        first = self.command.strip().splitlines()[0] if self.command.strip() else ""
        return first if len(first) <= 80 else first[:79] + "…"

    def to_dict(self) -> dict[str, Any]:
        """forge.showConfig's view of the entry, with where it comes from."""
        out: dict[str, Any] = {"event": self.event, "command": self.command, "timeout_secs": self.timeout_secs}
        if self.matcher:
            out["matcher"] = list(self.matcher)
        out["source"] = self.source
        if self.path is not None:
            out["file"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out


def payload(
    event: str,
    *,
    cwd: str,
    session_id: str,
    turn_id: str,
    transcript_path: str,
    tool_name: str | None = None,
    tool_input: Mapping[str, Any] | None = None,
    tool_use_id: str | None = None,
    tool_response: Mapping[str, Any] | None = None,
    stop_hook_active: bool | None = None,
) -> dict[str, Any]:
    """What a hook reads on stdin: Claude Code's fields (hook_event_name its event's name, tool_name forge's tool,
    tool_input the call's arguments) and forge's own (event, turn_id)."""
    out: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "hook_event_name": CLAUDE_EVENTS[event],
        "event": event,
        "turn_id": turn_id,
    }
    if tool_name is not None:
        out["tool_name"] = tool_name
        out["tool_input"] = dict(tool_input or {})
    if tool_use_id is not None:
        out["tool_use_id"] = tool_use_id
    if tool_response is not None:
        out["tool_response"] = dict(tool_response)
    if stop_hook_active is not None:
        out["stop_hook_active"] = stop_hook_active
    return out


def cut(text: str, limit: int) -> str:
    """text stripped and cut at limit characters, saying so."""
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"
