"""forge.run from a file that is a trap: the server reads the selection off its event loop, regular files only."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient
from test_lsp import command

from conftest import write_script

pytestmark = pytest.mark.timeout(60)


async def test_a_selection_in_a_fifo_does_not_hang_the_server(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "looked"})
    fifo = ws / "pipe.py"
    os.mkfifo(fifo)
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}
    result = await asyncio.wait_for(command(client, "forge.run", {"prompt": "explain", "uri": fifo.as_uri(), "range": rng}), 30)
    assert result["status"] == "completed" and result["text"] == "looked"
    assert any("not read" in m.message and "FIFO" in m.message for m in client.log_messages)
    # The server still answers (its loop was never blocked).
    assert (await command(client, "forge.status", {}))["running"] is False
