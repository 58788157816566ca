"""Running a child process in its own process group, killed whole when the call ends (exit, timeout or cancel)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

Watch = Callable[[int, bool, Sequence[str]], None]
"""Told (pid, True, argv) when a process group starts and (pid, False, argv) when it is gone: argv is what
was executed (its /proc command line may be empty, or another program's, while bash execs in place)."""


def unwatched(_pid: int, _running: bool, _argv: Sequence[str]) -> None:
    """A Watch that records nothing."""


@dataclass(frozen=True)
class Completed:
    """A finished process: exit code and decoded output."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _exited(pid: int) -> None:
    """Wait until the child exits, without reaping it.

    The child stays a zombie until we reap it, so its pid (= its process
    group's id) cannot be reused: killing the group afterwards cannot hit a
    stranger, and the group's other members (a `sleep 300 &` left behind)
    are still found by it.
    """
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        # No pidfd (old kernel): a thread blocks in waitid, still without reaping.
        await loop.run_in_executor(None, lambda: os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT))
        return
    done = loop.create_future()

    def ready() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(fd, ready)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


_reaping: set[asyncio.Future[Any]] = set()


def _reap_later(proc: subprocess.Popen[bytes]) -> None:
    """Reap a killed child without blocking the event loop (it is dying: SIGKILL was sent)."""
    if proc.poll() is not None:
        return
    future = asyncio.get_running_loop().run_in_executor(None, proc.wait)
    _reaping.add(future)
    future.add_done_callback(_reaping.discard)


def shell_argv(command: str) -> list[str]:
    """The argv that runs one command line in bash (sh where there is no bash)."""
    return ["/bin/bash" if Path("/bin/bash").exists() else "/bin/sh", "-c", command]


async def run_process(
    argv: Sequence[str] | str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_bytes: int = 8 * 1024 * 1024,
    watch: Watch = unwatched,
    grace: float = 1.0,
    stdin: bytes | None = None,
) -> Completed:
    """Run argv (a list, or a shell command string) and wait, at most timeout seconds; stdin: what the process
    reads on its standard input (None: nothing, /dev/null).

    The call ends when the process itself exits (or times out, or the
    awaiting task is cancelled); then its whole process group is killed,
    always, so no background child outlives the call or keeps it waiting on
    a pipe. Output still in the pipes is collected for at most grace seconds.
    """
    args = shell_argv(argv) if isinstance(argv, str) else list(argv)
    # A session of its own: the process group can be killed whole, grandchildren included.
    # Popen, not asyncio's subprocess: asyncio's child watcher reaps the child the moment it
    # exits, and a reaped leader's pid may be reused before its group is killed.
    proc = subprocess.Popen(  # noqa: ASYNC220 - fork+exec only; the waiting is asynchronous
        args,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    watch(proc.pid, True, args)
    out = _Sink(max_bytes)
    err = _Sink(max_bytes)
    drains = [asyncio.ensure_future(out.drain(proc.stdout)), asyncio.ensure_future(err.drain(proc.stderr))]
    feed: asyncio.WriteTransport | None = None
    timed_out = False
    try:
        feed = await _feed(proc, stdin)
        try:
            await asyncio.wait_for(_exited(proc.pid), timeout)
        except TimeoutError:
            timed_out = True
        # The process has exited (a zombie, not yet reaped) or timed out: end its group now.
        _killpg(proc.pid)
        if timed_out:
            await asyncio.wait_for(_exited(proc.pid), 10)
        proc.wait()
        # What the killed group wrote is in the pipes; a process that left the group
        # (setsid) may keep them open: collect for grace seconds, no longer.
        await asyncio.wait(drains, timeout=grace)
    except BaseException:
        _killpg(proc.pid)
        _reap_later(proc)
        raise
    finally:
        for task in drains:
            task.cancel()
        # Each drain closes its pipe; one cancelled before it started leaves it to us.
        await asyncio.wait(drains)
        if feed is not None and feed.get_write_buffer_size():
            feed.abort()  # what the process did not read is dropped (it is gone: no one would read it)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()
        watch(proc.pid, False, args)
    return Completed(proc.returncode if proc.returncode is not None else -1, out.text(), err.text(), timed_out)


async def _feed(proc: subprocess.Popen[bytes], data: bytes | None) -> asyncio.WriteTransport | None:
    """Write data to the process's stdin as it reads it, then close it (EOF), without blocking the event loop: a
    process that never reads does not hold the call up (its write waits in the transport's buffer until it ends)."""
    if data is None or proc.stdin is None:
        return None
    loop = asyncio.get_running_loop()
    try:
        transport, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, proc.stdin)
    except OSError:
        return None
    transport.write(data)
    transport.close()  # after the buffer is written; a process that exits first breaks the pipe, which is fine
    return transport


class _Sink:
    """The first max_bytes of one pipe's output, kept as it arrives (a cut-off drain loses nothing read)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.chunks: list[bytes] = []
        self.size = 0

    async def drain(self, pipe: IO[bytes] | None) -> None:
        if pipe is None:
            return
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(loop=loop)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
        try:
            while chunk := await reader.read(65536):
                if self.size < self.max_bytes:
                    self.chunks.append(chunk[: self.max_bytes - self.size])
                self.size += len(chunk)
        finally:
            transport.close()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")
