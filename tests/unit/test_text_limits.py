"""Reply text: capped per assistant message; streamed text merged to ~20 notifications a second, whole."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forge_lsp.domain.events import AssistantText
from forge_lsp.domain.messages import MAX_REPLY_CHARS, REPLY_CUT_MARKER, AssistantReply
from forge_lsp.lsp.coalesce import TextCoalescer

from fakes import FakeModel, Harness, answer


class ChunkedModel(FakeModel):
    """Streams each reply's text in pieces of `size` characters."""

    size: int = 1000

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
    ) -> AssistantReply:
        item = self.replies.pop(0)
        assert isinstance(item, AssistantReply)
        for i in range(0, len(item.text), self.size):
            on_text(item.text[i : i + self.size])
        return item


async def test_a_huge_reply_is_cut_with_a_marker_everywhere_the_same(workspace: Path) -> None:
    huge = "word " * 80_000  # 400,000 characters
    for model in (FakeModel([answer(huge)]), ChunkedModel([answer(huge)])):
        h = Harness(workspace, model)
        summary = await h.run()
        expected = huge[:MAX_REPLY_CHARS] + REPLY_CUT_MARKER
        assert summary.text == expected.strip()
        streamed = "".join(e.text for e in h.events if isinstance(e, AssistantText))
        assert streamed == expected
        stored = [m for m in h.store.history(summary.conversation_id) if m.role == "assistant"]
        assert stored[-1].content == expected
        h.store.close()


async def test_a_reply_under_the_cap_is_untouched(workspace: Path) -> None:
    h = Harness(workspace, ChunkedModel([answer("x" * (MAX_REPLY_CHARS - 1) + " ")]))
    summary = await h.run()
    assert summary.text == "x" * (MAX_REPLY_CHARS - 1) and REPLY_CUT_MARKER not in summary.text


def text_event(text: str, turn: str = "t1") -> dict[str, Any]:
    return {"type": "assistantText", "turnId": turn, "text": text}


async def test_5000_tiny_chunks_are_at_most_20_notifications_a_second_and_whole() -> None:
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()

    def send(payload: dict[str, Any]) -> None:
        sent.append(payload)
        if payload["type"] == "turnFinished":
            done.set()

    events = TextCoalescer(send)
    started = time.monotonic()
    for i in range(5000):
        events(text_event(f"w{i} "))
        if i % 50 == 0:
            await asyncio.sleep(0)  # the stream yields to the loop now and then, as a real one does
    events({"type": "turnFinished", "turnId": "t1"})
    await asyncio.wait_for(done.wait(), 5)
    duration = time.monotonic() - started
    texts = [p["text"] for p in sent if p["type"] == "assistantText"]
    assert len(texts) <= duration * 20 + 2
    assert "".join(texts) == "".join(f"w{i} " for i in range(5000))
    assert sent[-1]["type"] == "turnFinished"


async def test_other_events_send_the_held_text_first_and_a_pause_sends_it_anyway() -> None:
    sent: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    def send(payload: dict[str, Any]) -> None:
        sent.append(payload)
        arrived.set()

    events = TextCoalescer(send)
    events(text_event("first "))  # the first piece goes at once
    events(text_event("held "))
    events({"type": "toolCallStarted", "turnId": "t1"})
    assert [p.get("text", p["type"]) for p in sent] == ["first ", "held ", "toolCallStarted"]
    events(text_event("later "))
    events(text_event("still "))
    arrived.clear()
    await asyncio.wait_for(arrived.wait(), 2)  # nothing else comes: the timer sends what is held
    assert "".join(p.get("text", "") for p in sent) == "first held later still "
    events(text_event("other turn ", turn="t2"))  # turns are held apart
    assert sent[-1]["turnId"] == "t2"
