"""The coalescing stdout: one write per event-loop step, order kept, write-through off the loop."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest

from forge_lsp.lsp.transport import CoalescingWriter, FrameReader


class CountingIO(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        return super().write(data)


async def test_messages_of_one_step_go_out_in_one_write_in_order() -> None:
    raw = CountingIO()
    w = CoalescingWriter(raw)
    for i in range(5):
        w.write(f"m{i};".encode())
        w.flush()
    assert raw.getvalue() == b""  # nothing until the step ends
    await asyncio.sleep(0)
    assert raw.getvalue() == b"m0;m1;m2;m3;m4;" and raw.writes == 1
    w.write(b"next")
    w.flush()
    await asyncio.sleep(0)
    assert raw.getvalue().endswith(b"next") and raw.writes == 2


def test_writes_through_when_no_loop_runs() -> None:
    raw = CountingIO()
    w = CoalescingWriter(raw)
    w.write(b"a")
    w.flush()
    assert raw.getvalue() == b"a"
    w.write(b"b")
    w.close()
    assert raw.getvalue() == b"ab"


# -- reading frames: a bad frame is skipped, the next one is read -------------------


def frame(obj: dict[str, object]) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


GOOD = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
BAD_FRAMES = {
    "length-abc": b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "method": "lost"}',
    "no-length-header": b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0", "method": "lost"}',
    "huge-length": b"Content-Length: 99999999999999\r\n\r\n{}",
    "length-past-the-body": b'Content-Length: 5000\r\n\r\n{"jsonrpc": "2.0"}',
    "length-short-of-the-body": b'Content-Length: 5\r\n\r\n{"jsonrpc": "2.0", "method": "x"}',
    "not-json": b"Content-Length: 9\r\n\r\nnot json!",
    "garbage-line": b"hello there\r\n\r\n",
}


async def bodies(data: bytes) -> list[bytes]:
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    reader = FrameReader(stream, logging.getLogger("test"))
    out = []
    while (body := await reader.next_body()) is not None:
        out.append(body)
    return out


@pytest.mark.parametrize("bad", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
async def test_the_reader_resynchronises_on_the_next_header_after_a_bad_frame(bad: bytes) -> None:
    got = await bodies(frame({"jsonrpc": "2.0", "method": "first"}) + bad + frame(GOOD))
    assert json.loads(got[0])["method"] == "first"
    assert json.loads(got[-1]) == GOOD


async def test_headers_other_than_content_length_are_accepted_quietly(caplog: pytest.LogCaptureFixture) -> None:
    body = json.dumps(GOOD).encode()
    data = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    assert await bodies(data * 2) == [body, body]
    assert not caplog.records


async def test_a_frame_split_across_many_reads_is_one_message() -> None:
    data = frame(GOOD) * 3
    stream = asyncio.StreamReader()
    reader = FrameReader(stream, logging.getLogger("test"))

    async def feed() -> None:
        for i in range(len(data)):
            stream.feed_data(data[i : i + 1])
            await asyncio.sleep(0)
        stream.feed_eof()

    feeder = asyncio.ensure_future(feed())
    got = [await reader.next_body() for _ in range(3)]
    await feeder
    assert [json.loads(b) for b in got if b] == [GOOD] * 3
