"""The one careful reader of small text files (config.toml, .forge.toml, mcp.json, agents, commands)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge_lsp.config import ConfigLoader
from forge_lsp.core.commands import Commands
from forge_lsp.mcp_config import load_servers
from forge_lsp.textfile import Unusable, read_text


def test_read_text(tmp_path: Path) -> None:
    assert read_text(tmp_path / "none", 10) is None
    (tmp_path / "ok").write_bytes(b"a\rb\n")
    assert read_text(tmp_path / "ok", 10) == "a\rb\n"  # bytes as they are: a bare CR stays
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(Unusable, match="11 bytes, over the 10-byte limit"):
        read_text(tmp_path / "big", 10)
    (tmp_path / "latin").write_bytes(b"caf\xe9 ok")
    with pytest.raises(Unusable, match=r"not UTF-8 text \(invalid continuation byte at byte 3\)"):
        read_text(tmp_path / "latin", 10)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Unusable, match="not a regular file"):
        read_text(tmp_path / "fifo", 10)  # never opened: nothing blocks
    with pytest.raises(Unusable, match="not a regular file"):
        read_text(tmp_path, 10)


def test_every_loader_reports_the_same_reason(tmp_path: Path) -> None:
    """A FIFO as .forge.toml, as .mcp.json and as a command: each is reported, none blocks, the same words."""
    root = tmp_path / "ws"
    (root / ".forge" / "commands").mkdir(parents=True)
    for path in (root / ".forge.toml", root / ".mcp.json", root / ".forge" / "commands" / "x.md"):
        os.mkfifo(path)
    config = ConfigLoader(root, tmp_path / "config.toml").load(trusted=True)
    mcp = load_servers(tmp_path / "mcp.json", None, root, trusted=True)
    commands = Commands.load(root, trusted=True, user=tmp_path / "commands")
    messages = [p.message for p in (*config.problems, *mcp.problems, *commands.problems)]
    assert len(messages) == 3 and all("not a regular file" in m for m in messages), messages


def test_a_workspace_file_linked_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    """.forge.toml and .mcp.json that lead elsewhere (a link to a file of the user's, or to /dev/zero) are not read,
    trusted or not, and say why; the user's own files may be links anywhere."""
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "elsewhere.toml").write_text("max_requests_per_turn = 1\n")
    (tmp_path / "elsewhere.json").write_text('{"mcpServers": {"x": {"command": "true"}}}')
    (root / ".forge.toml").symlink_to(tmp_path / "elsewhere.toml")
    (root / ".mcp.json").symlink_to(tmp_path / "elsewhere.json")
    config = ConfigLoader(root, tmp_path / "config.toml").load(trusted=True)
    mcp = load_servers(tmp_path / "mcp.json", None, root, trusted=True)
    assert config.config.max_requests_per_turn != 1 and mcp.servers == {}
    messages = [p.message for p in (*config.problems, *mcp.problems)]
    assert len(messages) == 2 and all("points outside the workspace" in m for m in messages), messages
    user = tmp_path / "config.toml"
    user.symlink_to(tmp_path / "elsewhere.toml")
    assert ConfigLoader(root, user).load().config.max_requests_per_turn == 1
