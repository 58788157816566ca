"""What tools/gitrepos.py reads of a workspace an attacker (or a sandboxed command) shaped (issue 34 item 5).

Before every file tool's write and after every sandboxed command the server reads .gitmodules, .git files
and commondir files to find what git would run: a FIFO there must not block, a sparse file of gigabytes
must not be read whole, a link out of the workspace must not be followed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.domain.config import ForgeConfig, ShellConfig
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools import gitrepos
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]


def context(root: Path, trusted: bool, **shell: Any) -> ToolContext:
    return ToolContext(Workspace(root), replace(ForgeConfig(), shell=ShellConfig(**shell), trusted=trusted))


async def call(ctx: ToolContext, tool: str, **args: Any) -> ToolResult:
    result, _ = await ToolRegistry().call(ToolCall("c1", tool, json.dumps(args)), ctx)
    return result


@contextlib.contextmanager
def released(fifo: Path) -> Iterator[None]:
    """After the test: a reader still blocked on the FIFO (the unfixed code's thread) is let go, so the test
    process can end."""
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def bwrap_works() -> None:
    from forge_lsp.tools import sandbox

    problem = asyncio.run(sandbox.unavailable())
    if problem is not None:
        pytest.skip(f"the shell sandbox cannot run on this machine: {problem}")


async def test_a_gitmodules_fifo_made_by_a_sandboxed_command_blocks_nothing(
    workspace: Path, bwrap_works: None, record_reliability: Record
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    ctx = context(workspace, trusted=False, timeout_secs=30)  # untrusted: the command runs under bwrap
    started = time.monotonic()
    with released(workspace / ".gitmodules"):
        made = await call(ctx, "shell", command="mkfifo .gitmodules && echo made")
        took = time.monotonic() - started
        assert "made" in made.output and (workspace / ".gitmodules").is_fifo()
        assert took < 15, f"the shell call took {took:.0f} s (its timeout is 30 s)"
        # The next write reads .gitmodules again (the file tools refuse what git executes from): in a thread, so
        # that a blocked read fails this test instead of wedging it.
        wrote = await asyncio.wait_for(asyncio.to_thread(asyncio.run, call(ctx, "write", file_path="a.txt", content="x")), 10)
        assert not wrote.is_error, wrote.output
        assert (workspace / "a.txt").read_text() == "x"
    record_reliability(
        "attack: .gitmodules made a FIFO by a sandboxed command",
        "mkfifo .gitmodules in an untrusted workspace's shell call, then a write",
        "the shell call ends as the command does, the write lands; the FIFO is never opened",
    )


def test_a_sparse_dot_git_file_of_three_gigabytes_is_not_read_whole(workspace: Path, record_reliability: Record) -> None:
    dot_git = workspace / "sub" / ".git"
    dot_git.parent.mkdir()
    with dot_git.open("wb") as f:
        f.write(b"gitdir: ../.hooks-here\n")
        f.truncate(3 * 1024**3)  # sparse: nothing written on the disk
    (workspace / ".hooks-here" / "hooks").mkdir(parents=True)
    # In a process of its own with 1 GB of address space: reading the file whole would end in MemoryError.
    script = (
        "import asyncio, json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))\n"
        "from pathlib import Path\n"
        "from forge_lsp.domain.config import ForgeConfig\n"
        "from forge_lsp.domain.messages import ToolCall\n"
        "from forge_lsp.tools.base import ToolContext\n"
        "from forge_lsp.tools.registry import ToolRegistry\n"
        "from forge_lsp.tools.workspace import Workspace\n"
        "ctx = ToolContext(Workspace(Path(sys.argv[1])), ForgeConfig())\n"
        "for path in ('a.txt', '.hooks-here/hooks/pre-commit'):\n"
        "    r, _ = asyncio.run(ToolRegistry().call(ToolCall('c', 'write', json.dumps({'file_path': path, 'content': 'x'})), ctx))\n"
        "    print(json.dumps([path, r.is_error, r.output]))\n"
    )
    p = subprocess.run([sys.executable, "-c", script, str(workspace)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    (plain, hook) = [json.loads(line) for line in p.stdout.splitlines()]
    assert plain == ["a.txt", False, plain[2]] and (workspace / "a.txt").read_text() == "x"
    # The .git file was read (its first bytes): the hooks folder it names is still refused.
    assert hook[1] is True and "git" in hook[2], hook
    record_reliability(
        "attack: a sparse .git file of 3 GB",
        "sub/.git naming a gitdir, then 3 GB of holes; a write, in 1 GB of address space",
        "only its first 4 KB read: the write lands, the gitdir it names stays protected",
    )


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "link outside"])
def test_gitrepos_reads_only_regular_files_inside_the_workspace(workspace: Path, tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside-modules"
    outside.write_text('[submodule "x"]\n\tpath = ../../elsewhere\n')
    target = workspace / ".gitmodules"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link to /dev/zero":
        target.symlink_to("/dev/zero")
    else:
        target.symlink_to(outside)
    with released(target):
        started = time.monotonic()
        assert gitrepos._head(workspace, target, 1000) is None
        assert gitrepos.dot_gits(workspace) == []
        assert time.monotonic() - started < 5
    (workspace / "plain").write_text('[submodule "y"]\n\tpath = y\n')
    assert gitrepos._head(workspace, workspace / "plain", 1000) == '[submodule "y"]\n\tpath = y\n'
