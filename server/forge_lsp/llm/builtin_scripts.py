"""Scripts of the scripted model that ship with forge-lsp ("scripted/<name>")."""

from __future__ import annotations

from typing import Any


def _shell(command: str, description: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command, "description": description}}


def _patch(old: str, new: str) -> dict[str, Any]:
    return {"name": "patch", "arguments": {"file_path": "app.cfg", "old_string": old, "new_string": new}}


# The demo: a model request that hits a rate limit (retried), a shell tool that
# fails twice (attempts remaining 2, then 1) and then recovers, and a patch tool
# that fails three times in a row, which interrupts the turn at the limit.
DEMO: dict[str, Any] = {
    "responses": [
        {"error": {"status": 429, "message": "rate limited by the provider (demo)"}},
        {"text": "Let me look at the configuration first.", "tool_calls": [_shell("cat config/app.cfg", "show the config")]},
        {"text": "Not there. Maybe it is under etc/.", "tool_calls": [_shell("cat etc/app.cfg", "show the config")]},
        {"tool_calls": [{"name": "fs_search", "arguments": {"pattern": "port", "output_mode": "content"}}]},
        {"text": "Found it at the root.", "tool_calls": [_shell("cat app.cfg", "show the config")]},
        {"text": "Now I'll change the port.", "tool_calls": [_patch("port=8080", "port=9090")]},
        {"tool_calls": [_patch("port = 8080\n", "port = 9090\n")]},
        {"tool_calls": [_patch("PORT=8080", "PORT=9090")]},
        {"text": "The port is now 9090."},
    ]
}

ECHO: dict[str, Any] = {"responses": [{"text": "Hello from the scripted model."}]}

BUILTIN: dict[str, dict[str, Any]] = {"demo": DEMO, "echo": ECHO}
