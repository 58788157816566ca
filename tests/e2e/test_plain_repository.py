"""A plain git repository (no .forge.toml) with no model set anywhere, as a newcomer's first try in an editor: a
turn refused at once and forge.status leave it as it was (no untracked .forge/ with its .gitignore)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

pytestmark = [pytest.mark.timeout(90), pytest.mark.untrusted]  # no model set anywhere: not even the editor's


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(root), "add", "app.py"], check=True)
    return root


async def command(client: LanguageClient, name: str, arg: Any = None) -> Any:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=[arg or {}]))


async def test_a_refused_turn_and_forge_status_leave_a_plain_repository_as_it_was(client: LanguageClient, ws: Path) -> None:
    with pytest.raises(JsonRpcException, match="no model is set"):
        await command(client, "forge.run", {"prompt": "hello"})
    status = await command(client, "forge.status")
    assert status["running"] is False and status["agent"] == "forge", status
    assert status["usage"]["conversation"]["promptTokens"] == 0, status
    assert not (ws / ".forge").exists()
    git = subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert git.stdout == "A  app.py\n", git.stdout
