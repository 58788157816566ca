"""edit_review = "confirm" in ACP (issue 34 item 12): every write, patch, remove and undo is asked about through
session/request_permission, with the change as the call's content, whether or not the client offers
fs/write_text_file; a client with fs read/write used to be asked about nothing (a remove went straight to the
disk), and a client without fs/write_text_file got every write on the disk unasked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from test_acp import Recorder, start, workspace_with

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]
CONFIRM = 'edit_review = "confirm"'


def calls(*tool_calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool_calls": [call]} for call in tool_calls]


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def prompt(workspace: Path, client: Recorder, fs: bool) -> None:
    ctx, conn, proc, _ = await start(client, fs=fs, read=fs)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    finally:
        await ctx.__aexit__(None, None, None)


@pytest.mark.parametrize("fs", [False, True], ids=["disk", "client-fs"])
async def test_confirm_asks_before_every_write_patch_remove_and_undo(
    workspace: Path, fs: bool, record_reliability: Record
) -> None:
    (workspace / "old.txt").write_text("old text\n")
    steps = calls(
        tool("write", file_path="new.txt", content="new text\n"),
        tool("patch", file_path="old.txt", old_string="old", new_string="patched"),
        tool("remove", path="old.txt"),
        tool("undo", path="old.txt"),
    )
    workspace_with(workspace, *steps, {"text": "done"}, toml=CONFIRM)
    client = Recorder(answer="allow_once", buffers={} if fs else None)
    await prompt(workspace, client, fs)
    started = [u for u in client.of("tool_call")]
    assert [c.title.split(":")[0] for c in started] == ["write", "patch", "remove", "undo"]
    asked = [call for call, _ in client.permissions]
    assert [a.tool_call_id for a in asked] == [c.tool_call_id for c in started]  # each about its own call
    assert client.order == [x for c in started for x in (f"tool_call {c.tool_call_id}", f"permission {c.tool_call_id}")]
    assert [a.kind for a in asked] == ["edit", "edit", "delete", "edit"]
    assert [a.title for a in asked] == [
        "Apply the edit to new.txt (write)?",
        "Apply the edit to old.txt (patch)?",
        "Remove old.txt (remove)?",
        "Apply the edit to old.txt (undo)?",
    ]
    diffs = [a.content[0] for a in asked]
    assert all(d.type == "diff" for d in diffs)
    assert (diffs[0].old_text, diffs[0].new_text) == (None, "new text\n")
    assert (diffs[1].old_text, diffs[1].new_text) == ("old text\n", "patched text\n")
    assert (diffs[2].old_text, diffs[2].new_text) == ("patched text\n", "")
    finished = [u for u in client.of("tool_call_update") if u.status is not None]
    assert [u.status for u in finished] == ["completed"] * 4, [u.content for u in finished]
    if not fs:
        assert (workspace / "new.txt").read_text() == "new text\n"
        assert (workspace / "old.txt").read_text() == "patched text\n"  # removed, then the undo brought it back
    record_reliability(
        f"attack: an agent's edits in ACP with edit_review = confirm ({'client fs/write_text_file' if fs else 'no client fs'})",
        "write, patch, remove and undo in one turn",
        "each asked through session/request_permission with its diff, after its tool_call, before it lands",
    )


@pytest.mark.parametrize("fs", [False, True], ids=["disk", "client-fs"])
async def test_a_rejected_edit_changes_nothing(workspace: Path, fs: bool) -> None:
    (workspace / "keep.txt").write_text("keep\n")
    workspace_with(
        workspace,
        *calls(tool("write", file_path="new.txt", content="x\n"), tool("remove", path="keep.txt")),
        {"text": "ok"},
        toml=CONFIRM,
    )
    client = Recorder(answer="reject_once")
    await prompt(workspace, client, fs)
    assert len(client.permissions) == 2
    assert not (workspace / "new.txt").exists() and client.writes == []
    assert (workspace / "keep.txt").read_text() == "keep\n"
    failed = [u for u in client.of("tool_call_update") if u.status == "failed"]
    texts = [c.content.text for u in failed for c in u.content if getattr(c, "type", "") == "content"]
    assert any("the user rejected the edit to new.txt" in t for t in texts), texts
    assert any("the user rejected the edit to keep.txt" in t for t in texts), texts


async def test_allow_for_this_conversation_asks_once(workspace: Path) -> None:
    workspace_with(
        workspace,
        *calls(tool("write", file_path="a.txt", content="a\n"), tool("write", file_path="b.txt", content="b\n")),
        {"text": "ok"},
        toml=CONFIRM,
    )
    client = Recorder(answer="allow_always")
    await prompt(workspace, client, fs=False)
    assert len(client.permissions) == 1
    assert (workspace / "a.txt").read_text() == "a\n" and (workspace / "b.txt").read_text() == "b\n"


async def test_without_confirm_nothing_is_asked(workspace: Path) -> None:
    workspace_with(workspace, *calls(tool("write", file_path="a.txt", content="a\n")), {"text": "ok"})
    client = Recorder(answer="reject_once")
    await prompt(workspace, client, fs=False)
    assert client.permissions == [] and (workspace / "a.txt").read_text() == "a\n"
