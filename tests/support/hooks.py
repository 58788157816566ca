"""What the hook tests of every frontend (tests/e2e, tests/agent_protocol, tests/cli) share."""

from __future__ import annotations

from typing import Any

GUARD = """\
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"].get("file_path", "")
if path.endswith(".env"):
    print(f"Blocked: {path} holds secrets; write {path}.example instead", file=sys.stderr)
    sys.exit(2)
"""
"""A PreToolUse script as written for Claude Code: it reads tool_input.file_path from stdin and exits 2 to block."""


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted model reply with one tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}
