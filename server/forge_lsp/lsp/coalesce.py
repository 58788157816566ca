"""forge/event with streamed text merged: a model streaming thousands of chunks is ~20 notifications a second.

Each chunk as a notification of its own costs the client a JSON parse and a
redraw per token. Text is held for at most one interval and sent as one
assistantText; any other event of the turn sends the held text first, so the
order of events and the whole text are kept.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]


class TextCoalescer:
    """Sends forge/event payloads, merging a turn's assistantText to at most one per ``interval`` seconds."""

    def __init__(self, send: Callable[[Payload], None], interval: float = 0.05) -> None:
        self.send = send
        self.interval = interval
        self._held: dict[str, Payload] = {}
        self._last: dict[str, float] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def __call__(self, payload: Payload) -> None:
        turn = str(payload.get("turnId", ""))
        if payload.get("type") != "assistantText":
            self.flush(turn)
            if payload.get("type") == "turnFinished":
                self._last.pop(turn, None)
            self.send(payload)
            return
        held = self._held.get(turn)
        if held is None:
            self._held[turn] = dict(payload)
        else:
            held["text"] = str(held.get("text", "")) + str(payload.get("text", ""))
        wait = self._last.get(turn, float("-inf")) + self.interval - time.monotonic()
        if wait <= 0:
            self.flush(turn)
        elif turn not in self._timers:
            try:
                self._timers[turn] = asyncio.get_running_loop().call_later(wait, self.flush, turn)
            except RuntimeError:  # no loop (shutting down): nothing would send it later
                self.flush(turn)

    def flush(self, turn: str) -> None:
        """Send a turn's held text now."""
        timer = self._timers.pop(turn, None)
        if timer is not None:
            timer.cancel()
        held = self._held.pop(turn, None)
        if held is not None:
            self._last[turn] = time.monotonic()
            self.send(held)
