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
    # The user's own config: a workspace whose .forge is a link out of it cannot be trusted at all.
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'model = "openai/gpt-stub"\napi_base = "{stub.url}"\n[retry]\nmax_attempts = 1\n')
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


# --- files git executes from (issue 22) -------------------------------------------------------


async def tool_call(ws: Path, name: str, trusted: bool, **args: object) -> object:
    import json
    from dataclasses import replace

    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.domain.messages import ToolCall
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.registry import ToolRegistry
    from forge_lsp.tools.workspace import Workspace

    ctx = ToolContext(Workspace(ws), replace(ForgeConfig(), trusted=trusted))
    result, _ = await ToolRegistry().call(ToolCall("c1", name, json.dumps(args)), ctx)
    return result


GIT_EXECUTES = [
    ("write", {"file_path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
    ("patch", {"file_path": ".git/config", "old_string": "[core]\n", "new_string": "[core]\n\tfsmonitor = touch pwned\n"}),
    ("multi_patch", {"file_path": ".git/config", "edits": [{"old_string": "[core]", "new_string": "[core]\nsshCommand=x"}]}),
    ("write", {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
    ("remove", {"path": ".git/hooks/pre-push"}),
    ("write", {"file_path": ".git/commondir", "content": "evil\n"}),
    ("write", {"file_path": ".git/config.worktree", "content": "[core]\n\tfsmonitor = x\n"}),
    ("write", {"file_path": ".git/modules/lib/config", "content": "[core]\n\tfsmonitor = x\n", "overwrite": True}),
    ("write", {"file_path": "sub/.git", "content": "gitdir: ../evil\n"}),
    ("write", {"file_path": "sub/.git/config", "content": "[core]\n\tfsmonitor = x\n"}),
    ("write", {"file_path": ".GIT/CONFIG", "content": "[core]\n\tfsmonitor = x\n", "overwrite": True}),
    ("write", {"file_path": "link-to-config", "content": "[core]\n\tfsmonitor = x\n", "overwrite": True}),
    ("undo", {"path": ".git/config"}),
]


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize(
    ("tool", "args"), GIT_EXECUTES, ids=[f"{t} {a.get('file_path') or a.get('path')}" for t, a in GIT_EXECUTES]
)
async def test_file_tools_refuse_what_git_executes_from(
    workspace: Path, tool: str, args: dict[str, object], trusted: bool, record_reliability: Record
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "modules" / "lib").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / ".git" / "modules" / "lib" / "config").write_text("[core]\n")
    (workspace / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\n")
    (workspace / "link-to-config").symlink_to(".git/config")
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    r = await tool_call(workspace, tool, trusted, **args)
    assert r.is_error and "git" in r.output and "refus" in r.output, r.output  # type: ignore[attr-defined]
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
    assert not (workspace / "sub").exists()
    record_reliability(
        f"attack: {tool} tool changing {args.get('file_path') or args.get('path')}",
        f"{'trusted' if trusted else 'untrusted'} workspace; git would run what it names on the next git status/commit",
        "refused with a clear error; nothing written",
    )


async def test_file_tools_still_write_ordinary_files_beside_git(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    for rel in (".gitignore", ".github/workflows/ci.yml", "src/config", "hooks/x.py", "docs/.git-notes.md"):
        r = await tool_call(workspace, "write", False, file_path=rel, content="x\n")
        assert not r.is_error, r.output  # type: ignore[attr-defined]


LINKED_GIT = [
    ("write", {"file_path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
    ("write", {"file_path": "conf/gitconfig", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
    ("write", {"file_path": "gitstore/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
    ("write", {"file_path": "gitstore/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
    ("write", {"file_path": "vendor/lib/.git/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
    ("write", {"file_path": "libconf", "content": "[core]\n\tfsmonitor = touch pwned\n", "overwrite": True}),
]


@pytest.mark.parametrize(("tool", "args"), LINKED_GIT, ids=[str(a["file_path"]) for _, a in LINKED_GIT])
async def test_file_tools_refuse_what_git_executes_from_behind_a_link(
    workspace: Path, tool: str, args: dict[str, object], record_reliability: Record
) -> None:
    # .git/config is a link to a file elsewhere in the repository (a dotfiles layout); a nested
    # repository's .git is a link to a folder in the workspace, and its config a link again.
    (workspace / ".git").mkdir()
    (workspace / "conf").mkdir()
    (workspace / "conf" / "gitconfig").write_text("[core]\n")
    (workspace / ".git" / "config").symlink_to("../conf/gitconfig")
    (workspace / "gitstore" / "hooks").mkdir(parents=True)
    (workspace / "gitstore" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / "gitstore" / "config").write_text("[core]\n")
    (workspace / "vendor" / "lib").mkdir(parents=True)
    (workspace / "vendor" / "lib" / ".git").symlink_to("../../gitstore")
    (workspace / "other" / ".git").mkdir(parents=True)
    (workspace / "libconf").write_text("[core]\n")
    (workspace / "other" / ".git" / "config").symlink_to("../../libconf")
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    r = await tool_call(workspace, tool, False, **args)
    assert r.is_error and "git" in r.output and "refus" in r.output, r.output  # type: ignore[attr-defined]
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
    record_reliability(
        f"attack: {tool} tool changing {args['file_path']}, which a .git entry links to",
        "a .git/config linked to a file of the workspace, a nested repository's .git linked to a folder of it",
        "refused with a clear error (the link's target is what git reads); nothing written",
    )
