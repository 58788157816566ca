"""A cloned workspace's own files laid as traps for the server: links out of it, FIFOs where files go.

Each test is one attack: the turn still runs, nothing is read from or
written to a place outside the workspace, and nothing hangs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime

from support.openai_server import OpenAIStub

pytestmark = pytest.mark.timeout(60)

Record = Callable[[str, str, str], None]
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-for-the-model"


async def turn(ws: Path, stub: OpenAIStub) -> tuple[WorkspaceRuntime, object]:
    (ws / ".forge.toml").write_text(f'model = "openai/gpt-stub"\napi_base = "{stub.url}"\n[retry]\nmax_attempts = 1\n')
    runtime = WorkspaceRuntime(ws, trusted=True)
    notices: list[str] = []
    runtime.on_notice = notices.append
    try:
        summary = await asyncio.wait_for(runtime.run("hello", lambda e: None), 30)
    finally:
        runtime.close()
    runtime.notices = notices  # type: ignore[attr-defined]
    return runtime, summary


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")


async def test_a_linked_agents_md_is_not_sent_to_the_model(workspace: Path, tmp_path: Path, record_reliability: Record) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET)
    (workspace / "AGENTS.md").symlink_to(secret)
    with OpenAIStub([{"text": "hi"}]) as stub:
        runtime, summary = await turn(workspace, stub)
    assert summary.status.value == "completed"  # type: ignore[attr-defined]
    (request,) = stub.requests
    assert SECRET not in str(request["body"])
    # A real AGENTS.md is used (so the check above can fail).
    (workspace / "AGENTS.md").unlink()
    (workspace / "AGENTS.md").write_text("Always answer in French.")
    with OpenAIStub([{"text": "salut"}]) as stub:
        await turn(workspace, stub)
    assert "Always answer in French." in str(stub.requests[0]["body"])
    record_reliability(
        "attack: AGENTS.md linked out of the workspace",
        "AGENTS.md -> ~/.ssh/id_rsa in a cloned repository",
        "a link out of the workspace is not read: the key never reaches the model",
    )


async def test_a_fifo_agents_md_does_not_hang_the_turn(workspace: Path, record_reliability: Record) -> None:
    os.mkfifo(workspace / "AGENTS.md")
    with OpenAIStub([{"text": "hi"}]) as stub:
        runtime, summary = await turn(workspace, stub)
    assert summary.status.value == "completed"  # type: ignore[attr-defined]
    assert any("AGENTS.md is not used" in n and "FIFO" in n for n in runtime.notices), runtime.notices  # type: ignore[attr-defined]
    record_reliability(
        "attack: AGENTS.md as a FIFO",
        "a named pipe where AGENTS.md goes (an open() would block forever)",
        "refused unopened with a notice; the turn runs",
    )


@pytest.mark.parametrize("link", [".forge", ".forge/transcripts"])
async def test_transcripts_are_never_written_through_a_link(
    workspace: Path, tmp_path: Path, link: str, record_reliability: Record
) -> None:
    outside = tmp_path / "autostart"
    outside.mkdir()
    if link == ".forge/transcripts":
        (workspace / ".forge").mkdir()
    (workspace / link).symlink_to(outside)
    with OpenAIStub([{"text": "hi"}]) as stub:
        runtime, summary = await turn(workspace, stub)
    assert summary.status.value == "completed"  # type: ignore[attr-defined]
    assert list(outside.iterdir()) == []
    assert runtime.transcript is not None and runtime.transcript.path.is_file()
    assert runtime.transcript.path.is_relative_to(Path(os.environ["XDG_STATE_HOME"]))
    record_reliability(
        f"attack: {link} as a link",
        f"{link} -> a folder outside the workspace",
        "the transcript goes to the user's state folder; nothing written through the link",
    )
