"""Running a child process in its own process group, killed whole on timeout or cancel."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Watch = Callable[[int, bool], None]
"""Told (pid, True) when a process group starts and (pid, False) when it is gone."""


def _ignore(_pid: int, _running: bool) -> None:
    pass


def start_time(pid: int) -> str | None:
    """The kernel's start time of a process (tells a reused pid apart), or None if it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def kill_orphan(pid: int, started: str) -> bool:
    """Kill a process group left by a server that died, if that very process still runs."""
    if start_time(pid) != started:
        return False
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@dataclass(frozen=True)
class Completed:
    """A finished process: exit code and decoded output."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the process and everything it started (its process group)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_process(
    argv: Sequence[str] | str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_bytes: int = 8 * 1024 * 1024,
    watch: Watch = _ignore,
) -> Completed:
    """Run argv (a list, or a shell command string) and wait, at most timeout seconds.

    On timeout, or when the awaiting task is cancelled, the whole process
    group is killed, so no grandchild outlives the call.
    """
    # A session of its own: the process group can be killed whole, grandchildren included.
    options: dict[str, Any] = {
        "cwd": cwd,
        "env": dict(env),
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE,
        "start_new_session": True,
    }
    if isinstance(argv, str):
        shell = "/bin/bash" if Path("/bin/bash").exists() else None
        proc = await asyncio.create_subprocess_shell(argv, executable=shell, **options)
    else:
        proc = await asyncio.create_subprocess_exec(*argv, **options)

    async def drain(stream: asyncio.StreamReader | None) -> bytes:
        if stream is None:
            return b""
        chunks: list[bytes] = []
        size = 0
        while chunk := await stream.read(65536):
            if size < max_bytes:
                chunks.append(chunk[: max_bytes - size])
            size += len(chunk)
        return b"".join(chunks)

    watch(proc.pid, True)
    try:
        return await _wait(proc, drain, timeout)
    finally:
        watch(proc.pid, False)


async def _wait(proc: asyncio.subprocess.Process, drain: Callable[..., Any], timeout: float) -> Completed:
    out_task = asyncio.ensure_future(drain(proc.stdout))
    err_task = asyncio.ensure_future(drain(proc.stderr))
    try:
        await asyncio.wait_for(proc.wait(), timeout)
        timed_out = False
    except TimeoutError:
        kill_group(proc)
        await proc.wait()
        timed_out = True
    except BaseException:
        kill_group(proc)
        out_task.cancel()
        err_task.cancel()
        raise
    else:
        # The shell may have left children holding the pipes open.
        kill_group(proc)
    try:
        out, err = await asyncio.wait_for(asyncio.gather(out_task, err_task), 5)
    except TimeoutError:
        out_task.cancel()
        err_task.cancel()
        out, err = b"", b""
    return Completed(
        proc.returncode if proc.returncode is not None else -1,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
        timed_out,
    )
