"""The client's reports of document changes, for the server code that waits on one (an edit it made, reported)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class DocumentChanges:
    """Waits for the client's next didOpen / didChange / didClose of a document (it reporting an edit)."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self._listeners: list[Callable[[str], None]] = []

    def listen(self, listener: Callable[[str], None]) -> None:
        """Call listener(uri) on every change, as it comes."""
        self._listeners.append(listener)

    def changed(self, uri: str) -> None:
        """The client sent a change of uri (its handlers call this after pygls updated the document)."""
        for listener in self._listeners:
            listener(uri)
        event = self._events.pop(uri, None)
        if event is not None:
            event.set()

    async def until(self, uri: str, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ready() (checked on each change of uri), at most timeout seconds; whether it is."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not ready():
            left = deadline - loop.time()
            if left <= 0:
                return False
            event = self._events.setdefault(uri, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                return ready()
        return True
