"""The coalescing stdout: one write per event-loop step, order kept, write-through off the loop."""

from __future__ import annotations

import asyncio
import io

from forge_lsp.lsp.transport import CoalescingWriter


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
