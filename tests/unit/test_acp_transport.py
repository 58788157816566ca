"""ACP's stdout: the write protocol's flow control (drain waits on a full pipe, a lost reader never hangs it)."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from forge_lsp.acp.transport import WritePipeProtocol

DATA = bytes(range(256)) * 4096  # 1 MiB: over the pipe's buffer and the transport's high-water mark


async def pipe_writer() -> tuple[int, asyncio.StreamWriter, WritePipeProtocol]:
    """A StreamWriter on the write end of a fresh pipe, as stdio_streams makes one; the read end is returned."""
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    protocol = WritePipeProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(w, "wb", buffering=0))
    return r, asyncio.StreamWriter(transport, protocol, None, loop), protocol


def read_exactly(fd: int, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = os.read(fd, min(n, 65536))
        assert chunk, "the pipe ended early"
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


async def test_drain_waits_for_a_slow_reader_then_returns_with_everything_written() -> None:
    r, writer, _ = await pipe_writer()
    try:
        writer.write(DATA)
        drain = asyncio.ensure_future(writer.drain())
        await asyncio.sleep(0.2)
        assert not drain.done()  # paused: nobody has read the pipe yet
        got = await asyncio.to_thread(read_exactly, r, len(DATA))
        await asyncio.wait_for(drain, 5)
        assert got == DATA
        writer.write(b"more")  # not paused now: drain returns at once
        await asyncio.wait_for(writer.drain(), 1)
        assert await asyncio.to_thread(read_exactly, r, 4) == b"more"
    finally:
        writer.close()
        os.close(r)


async def test_a_reader_that_goes_away_wakes_a_waiting_drain_with_the_error() -> None:
    r, writer, protocol = await pipe_writer()
    writer.write(DATA)
    drain = asyncio.ensure_future(writer.drain())
    await asyncio.sleep(0.2)
    assert not drain.done()
    os.close(r)  # the client stops reading
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(drain, 5)
    assert protocol.closed.done()
    writer.write(b"after")  # dropped by the closed transport
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(writer.drain(), 1)
    await asyncio.wait_for(writer.wait_closed(), 1)


async def test_an_aborted_pipe_wakes_a_waiting_drain_with_connection_reset() -> None:
    r, writer, _ = await pipe_writer()
    try:
        writer.write(DATA)
        drain = asyncio.ensure_future(writer.drain())
        await asyncio.sleep(0.2)
        assert not drain.done()
        writer.transport.abort()  # connection_lost(None): what was buffered is gone
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(drain, 5)
    finally:
        os.close(r)


async def test_drain_after_a_clean_close_raises_and_wait_closed_returns() -> None:
    r, writer, protocol = await pipe_writer()
    try:
        writer.write(b"last")
        await writer.drain()
        writer.close()
        await asyncio.wait_for(writer.wait_closed(), 1)
        assert protocol.closed.done()
        assert await asyncio.to_thread(os.read, r, 100) == b"last"
        assert await asyncio.to_thread(os.read, r, 100) == b""  # the pipe is closed
        with pytest.raises(ConnectionResetError):
            await writer.drain()
    finally:
        os.close(r)


async def test_a_copy_thread_whose_file_fails_closes_the_pipe_it_drains() -> None:
    """stdout as a regular file: a write that fails there is the writer's lost connection, not a pipe that fills."""
    from forge_lsp.acp.transport import _copy

    r, writer, protocol = await pipe_writer()
    sink_r, sink_w = os.pipe()
    os.close(sink_r)  # every write to sink_w fails (EPIPE), as a full disk would
    thread = threading.Thread(target=_copy, args=(r, sink_w), daemon=True)
    thread.start()
    writer.write(DATA)
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(writer.drain(), 5)
    await asyncio.to_thread(thread.join, 5)
    assert not thread.is_alive() and protocol.closed.done()
