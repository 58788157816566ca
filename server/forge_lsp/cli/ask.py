"""forge-lsp run's answer to a confirm rule: the user at the terminal is asked, or nobody is.

Asked only when stdin and stderr are both a terminal (a person is there to read and answer);
otherwise the tool call fails as one nobody could allow (core.session.deny_all).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, TextIO

from forge_lsp.redact import redact

if TYPE_CHECKING:
    from forge_lsp.core.session import Ask

CHOICES = "[y/N/a]"
ANSWERS = {"y": "allow", "yes": "allow", "a": "always", "always": "always"}
"""What a typed answer means; anything else (Enter, n, end of input) is no."""


def is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def terminal_ask() -> Ask:
    """Who answers a confirm rule in this run: the terminal when there is one, else nobody."""
    if is_terminal(sys.stdin) and is_terminal(sys.stderr):
        return ask_on_terminal
    from forge_lsp.core.session import deny_all  # here: the language server imports is_terminal at start

    return deny_all


async def ask_on_terminal(tool: str, question: str, call_id: str | None = None) -> str:
    """The question on stderr, the answer a line typed on stdin: "allow", "always" or "deny"."""
    sys.stderr.write(f"forge-lsp: {redact(question)} {CHOICES} (y: yes, N: no, a: yes and do not ask again this run) ")
    sys.stderr.flush()
    try:
        line = await _read_line(sys.stdin.fileno())
    except asyncio.CancelledError:  # Ctrl-C at the question: what follows starts on a line of its own
        sys.stderr.write("\n")
        raise
    return ANSWERS.get(line.strip().lower(), "deny")


async def _read_line(fd: int) -> str:
    """One line typed at the terminal, read without blocking the event loop (the turn's other tasks go on)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    typed = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            chunk = b""
        typed.extend(chunk)
        if (not chunk or b"\n" in chunk) and not done.done():
            done.set_result(typed.split(b"\n", 1)[0].decode("utf-8", "replace"))

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)
