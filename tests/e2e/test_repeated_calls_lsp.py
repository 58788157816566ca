"""The repeated-call stop over LSP (issue 37 section 3): the same call made again and again, each time a success,
interrupts the turn as the failure limit does: an Error diagnostic of its own, the Continue offer, the interrupt
event; the call that reached the limit is not run; Continue goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient
from test_lsp import command, events, record_events, transcript_uri, until  # noqa: F401 (record_events: autouse)

from conftest import write_script

pytestmark = pytest.mark.timeout(60)

LOG = "echo run >> log.txt"
SAME = {"tool_calls": [{"name": "shell", "arguments": {"command": LOG}}]}
# One call as a model may format it over and over: the scripted model passes string arguments through as they are.
FORMATS = (
    '{"command": "echo run >> log.txt", "description": "log"}',
    '{ "command" : "echo run >> log.txt" , "description" : "log" }',
    '{"description":"log","command":"echo run >> log.txt"}',
    '{\n  "description": "log",\n  "command": "echo run >> log.txt"\n}',
    '{"command":"echo run >> log.txt",\t"description":"log"}',
    '{ "description": "log", "command": "echo run >> log.txt" }',
)


def reformatted() -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "shell", "arguments": text}]} for text in FORMATS]


def runs(ws: Path) -> int:
    log = ws / "log.txt"
    return len(log.read_text().splitlines()) if log.exists() else 0


async def test_identical_repeats_interrupt_with_their_own_error_and_the_continue_offer(
    client: LanguageClient, ws: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    client.answers.answer = None  # type: ignore[attr-defined]
    write_script(ws, *[SAME] * 8, {"text": "never asked"})
    result = await command(client, "forge.run", {"prompt": "log a run"})
    assert result["status"] == "interrupted"
    assert result["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 6, "tool": "shell"}
    assert (result["requests"], result["toolCalls"], result["failures"]) == (6, 6, 0)
    assert runs(ws) == 5  # the sixth call was not run
    lines = (ws / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text().splitlines()
    (error,) = [d for d in client.diagnostics[transcript_uri(ws, result["turnId"])] if d.severity == t.DiagnosticSeverity.Error]
    assert error.code == "max-repeated-calls-per-turn" and error.source == "forge"
    assert lines[error.range.start.line] == "## Interrupted: MaxRepeatedCallsReached"
    assert error.message == (
        "Repeated call limit (6) reached for this turn: shell was called 6 times in a row with the same arguments; "
        "the last shell call was not run"
    )
    assert error.data["reason"] == result["reason"]
    (interrupt,) = [e for e in events(client) if e.type == "interrupt"]
    assert interrupt.reason.kind == "MaxRepeatedCallsReached" and interrupt.reason.tool == "shell"
    assert interrupt.message == error.message
    # The sixth call is shown as a call that did not run, saying why.
    last = [e for e in events(client) if e.type == "toolCallFinished"][-1]
    assert last.ok is False and last.output.startswith(
        "<tool_call_error><cause>not run: the same shell call was made 6 times in a row"
    )
    await until(lambda: len(client.answers.requests) == 1)  # type: ignore[attr-defined]
    (offer,) = client.answers.requests  # type: ignore[attr-defined]
    assert offer.type == t.MessageType.Warning and "Repeated call limit (6)" in offer.message
    assert [a.title for a in offer.actions or []] == ["Continue"]
    shown = await command(client, "forge.showConfig", {})
    assert shown["max_repeated_calls_per_turn"] == {"value": 6, "source": "default"}
    record_reliability(
        "a model repeating one successful tool call (the same shell command, turn after turn of success)",
        "8 identical calls scripted; max_repeated_calls_per_turn 6 (LSP)",
        "the reminder at 3, the turn interrupted at the 6th call (not run: 5 ran): MaxRepeatedCallsReached Error "
        "diagnostic, Continue offered",
    )


async def test_reformatted_repeats_are_the_same_call_and_continue_goes_on(
    client: LanguageClient, ws: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    client.answers.answer = "Continue"  # type: ignore[attr-defined]
    write_script(ws, *reformatted(), {"text": "Logged five runs; stopping."})
    result = await command(client, "forge.run", {"prompt": "log a run"})
    assert result["status"] == "interrupted"
    assert result["reason"] == {"kind": "MaxRepeatedCallsReached", "limit": 6, "tool": "shell"}
    assert runs(ws) == 5
    reminders = [e for e in events(client) if e.type == "reminder"]
    assert [r.kind for r in reminders] == ["doomLoop"]  # at the third: whitespace and key order did not hide it
    # Continue: a new turn in the same conversation, which the model answers.
    await until(lambda: len([e for e in events(client) if e.type == "turnFinished"]) == 2)
    finished = [e for e in events(client) if e.type == "turnFinished"]
    assert [f.status for f in finished] == ["interrupted", "completed"]
    assert finished[1].summary.text == "Logged five runs; stopping."
    record_reliability(
        "a model repeating one call with its arguments reformatted (spacing, newlines, key order)",
        "6 shell calls whose argument JSON differs only in formatting (LSP), then Continue",
        "compared as parsed arguments: the reminder at 3, interrupted at 6 (5 ran); Continue completed the next turn",
    )
