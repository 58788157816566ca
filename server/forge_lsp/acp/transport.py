"""ACP's stdio: streams on the real stdin/stdout, and the gate that answers malformed JSON-RPC."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import stat
import sys
import threading
from typing import Any, NamedTuple, Protocol

from acp import run_agent

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 50 * 1024 * 1024
"""The longest line (one JSON-RPC message) read from the client; a longer one is refused and skipped."""


class ServedAgent(Protocol):
    """What serve_stdio runs: an ACP agent that closes what it opened.

    Not all of the SDK's Agent protocol: the SDK answers a method the agent lacks
    with method-not-found, so forge-lsp's agent implements only those it serves.
    """

    def close(self) -> None: ...


class WritePipeProtocol(asyncio.Protocol):
    """The write side of a pipe under an asyncio.StreamWriter, with flow control so drain() works.

    The pipe's transport calls pause_writing() when its buffer passes the high-water
    mark and resume_writing() when it drains below the low one; a drain() meanwhile
    waits. connection_lost() (the reader closed the pipe, a write failed, or the
    pipe was closed) wakes every waiting drain() with the error, ConnectionResetError
    when there is none, and every later drain() raises ConnectionResetError: a
    writer is never left waiting on a pipe nobody reads. ``closed`` is done then.

    StreamWriter calls _drain_helper() from drain() and _get_close_waiter() from
    wait_closed(): those two names are asyncio's, the contract it has with a
    protocol under a StreamWriter (asyncio's own FlowControlMixin has them too).
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._paused = False
        self._lost = False
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self.closed: asyncio.Future[None] = self._loop.create_future()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(exc if exc is not None else ConnectionResetError("Connection lost"))
        if not self.closed.done():
            self.closed.set_result(None)

    async def _drain_helper(self) -> None:
        if self._lost:
            raise ConnectionResetError("Connection lost")
        if not self._paused:
            return
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            self._waiters.remove(waiter)

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        return self.closed


def _pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _copy(src: int, dst: int) -> None:
    """Copy src to dst until src ends or a read or write fails (a thread's body), then close both.

    Closing src too matters when dst fails (stdout's file is on a full disk): the
    pipe's writer then sees its reader gone, rather than a pipe that never drains.
    """
    try:
        while chunk := os.read(src, 65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view) :]
    except OSError as exc:
        log.info("acp stdio copy: %s", exc)
    finally:
        os.close(dst)
        os.close(src)


class Stdio(NamedTuple):
    """The agent's end of the real stdin/stdout."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: WritePipeProtocol
    """The writer's: ``protocol.closed`` is done when the client stops reading (or the pipe is closed)."""
    threads: list[threading.Thread]
    """The threads that copy a regular file through a pipe, to join at the end."""


async def stdio_streams() -> Stdio:
    """Streams on the real stdin/stdout; fd 1 then points at stderr, so nothing else can write the protocol.

    asyncio reads and writes only pipes, sockets and terminals: a regular file
    (`forge-lsp acp < requests.jsonl > replies.jsonl`) is copied through a pipe by a thread.
    """
    loop = asyncio.get_running_loop()
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threads: list[threading.Thread] = []
    in_fd = 0
    if not _pipe_like(in_fd):
        r, w = os.pipe()
        threads.append(threading.Thread(target=_copy, args=(os.dup(in_fd), w), daemon=True))
        in_fd = r
    if not _pipe_like(out_fd):
        r, w = os.pipe()
        threads.append(threading.Thread(target=_copy, args=(r, out_fd), daemon=True))
        out_fd = w
    for thread in threads:
        thread.start()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", buffering=0))
    write_protocol = WritePipeProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: write_protocol, os.fdopen(out_fd, "wb", buffering=0))
    return Stdio(reader, asyncio.StreamWriter(transport, write_protocol, None, loop), write_protocol, threads)


def check_message(message: Any) -> tuple[Any, str] | None:
    """None for a JSON-RPC message the SDK can take; else (the id to answer, what is wrong)."""
    if isinstance(message, list):
        return None, "batch requests are not supported (one JSON-RPC object per line)"
    if not isinstance(message, dict):
        return None, f"a message must be a JSON object, got {type(message).__name__}"
    request_id = message.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (str, int))):
        return None, "id must be a string or a number"
    if "method" in message:
        if not isinstance(message["method"], str):
            return request_id, "method must be a string"
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return request_id, "params must be an object"
    elif "id" not in message:
        return None, "a message needs a method (a request or notification) or an id (a response)"
    return None


async def gate(raw: asyncio.StreamReader, inner: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Only well-formed JSON-RPC objects reach the SDK (it stops on anything else).

    A line that is not JSON is answered with -32700, one that is not a request,
    notification or response with -32600 (id null where it has none), a line over
    MAX_MESSAGE_BYTES is refused without being held in memory; each is logged in
    one line and the connection goes on.
    """

    async def reply(request_id: Any, code: int, message: str) -> None:
        log.warning("acp: refused a message from the client: %s", message)
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        writer.write((json.dumps(error) + "\n").encode())
        await writer.drain()

    skipping = False
    try:
        while True:
            try:
                line = await raw.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial  # the last line, with no newline
                if not line:
                    return
            except asyncio.LimitOverrunError as exc:
                await raw.readexactly(exc.consumed)  # dropped, never joined
                if not skipping:
                    await reply(None, -32600, f"message over {MAX_MESSAGE_BYTES} bytes; skipped")
                skipping = True
                continue
            if skipping:  # the end of the line that was too long
                skipping = False
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await reply(None, -32700, f"parse error: not JSON ({exc})")
                continue
            problem = check_message(message)
            if problem is not None:
                await reply(problem[0], -32600, f"invalid request: {problem[1]}")
                continue
            inner.feed_data(line if line.endswith(b"\n") else line + b"\n")
    except ConnectionError as exc:
        log.info("acp: the client went away: %s", exc)
    finally:
        inner.feed_eof()


async def serve_stdio(agent: ServedAgent) -> int:
    """Serve ACP with ``agent`` on stdin/stdout until the client closes it; the agent is closed after.

    The client closing stdin ends it, and so does the client no longer reading
    stdout: nothing could reach it, and a full pipe nobody reads would leave the
    SDK's writer waiting.
    """
    raw, writer, protocol, threads = await stdio_streams()
    inner = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES + 1)
    gate_task = asyncio.ensure_future(gate(raw, inner, writer))
    protocol.closed.add_done_callback(lambda _: gate_task.cancel())  # the gate ends the SDK's input
    try:
        # session/close is in the SDK's "unstable" set (of which the agent implements only that one:
        # session/fork and session/resume stay "method not found").
        await run_agent(agent, writer, inner, use_unstable_protocol=True)  # type: ignore[arg-type]  # see ServedAgent
    except ConnectionError as exc:  # the SDK's writer failed as it closed: the client had gone
        if not protocol.closed.done():
            raise
        log.info("acp: the client stopped reading: %s", exc)
    finally:
        gate_task.cancel()
        if (aclose := getattr(agent, "aclose", None)) is not None:
            await aclose()  # what the agent started (MCP servers) stops before it closes
        agent.close()
        writer.close()
        for thread in threads:
            thread.join(timeout=5)  # what was written reaches the file
    return 0
