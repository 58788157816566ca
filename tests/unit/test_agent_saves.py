"""The pure parts of lsp/agent_saves.py and lsp/document_changes.py: when a buffer is the disk's text, which
client saves, and waiting for the client's report of an edit."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as t

from forge_lsp.lsp.agent_saves import can_save, same_text
from forge_lsp.lsp.document_changes import DocumentChanges


@pytest.mark.parametrize(
    ("buffer", "disk", "same"),
    [
        ("a\nb\n", "a\nb\n", True),
        ("a\nb", "a\nb\n", True),  # Neovim's noeol buffer written with 'fixeol'
        ("a\r\nb\r\n", "a\r\nb", True),
        ("a\n", "\ufeffa\n", True),  # a byte order mark the editor does not show
        ("a\nb\n", "a\nb\n\n", False),  # only one final line ending is the editor's
        ("a\nmine\n", "a\n", False),
        ("a\r\n", "a\n\n", False),
    ],
)
def test_a_buffer_is_the_disks_text_up_to_what_an_editor_hides_or_adds(buffer: str, disk: str, same: bool) -> None:
    assert same_text(buffer, disk) is same
    assert not same_text(buffer, None)


def test_only_a_client_that_says_so_is_asked_to_save() -> None:
    assert can_save(t.ClientCapabilities(experimental={"forge": {"saveDocuments": True}}))
    for experimental in (None, {}, {"forge": True}, {"forge": {"saveDocuments": "yes"}}, ["forge"]):
        assert not can_save(t.ClientCapabilities(experimental=experimental))
    assert not can_save(None)


async def test_waiting_for_a_change_ends_on_the_change_or_at_the_timeout() -> None:
    changes = DocumentChanges()
    seen = {"version": 1}
    loop = asyncio.get_running_loop()

    def report() -> None:
        seen["version"] = 2
        changes.changed("file:///a.py")

    loop.call_later(0.05, changes.changed, "file:///other.py")
    loop.call_later(0.1, report)
    started = loop.time()
    assert await changes.until("file:///a.py", lambda: seen["version"] == 2, 5.0)
    assert loop.time() - started < 2.0
    assert not await changes.until("file:///a.py", lambda: seen["version"] == 3, 0.1)
    assert await changes.until("file:///a.py", lambda: True, 0.0)
