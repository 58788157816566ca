"""What people read: the errors map, the limit that fired, request counts, the retry notice's fate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from forge_lsp.core.transcript import TranscriptWriter
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import Interrupt, MaxToolFailurePerTurnLimitReached, TurnStatus, format_errors
from forge_lsp.domain.retry import ModelError
from forge_lsp.render import format_event

from fakes import FakeModel, Harness, answer, call, tools


def failing(name: str, i: int):  # noqa: ANN201
    if name == "shell":
        return call("shell", f"s{i}", command=f"exit {i}")
    return call("patch", f"p{i}", file_path="missing.txt", old_string="a", new_string="b")


def test_errors_map_reads_as_the_readme_shows_it() -> None:
    assert format_errors({"patch": 3}) == "{patch: 3}"
    assert format_errors({"shell": 1, "patch": 3}) == "{patch: 3, shell: 1}"
    reason = MaxToolFailurePerTurnLimitReached(3, {"patch": 3})
    assert reason.summary() == "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {patch: 3}}"
    line = format_event(Interrupt("t", reason).to_dict()) or ""
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {patch: 3}}" in line
    assert "'" not in line  # no Python dict repr anywhere a person reads it


def test_interrupt_names_the_per_tool_limit_that_fired() -> None:
    reason = MaxToolFailurePerTurnLimitReached(3, {"shell": 2}, {"shell": 2})
    text = reason.describe()
    assert "(3)" not in text
    assert "shell 2 ([tools.shell] max_failures)" in text and text.endswith("shell (2)")
    # The wire shape stays the contract's.
    assert reason.to_dict() == {"kind": "MaxToolFailurePerTurnLimitReached", "limit": 3, "errors": {"shell": 2}}
    # The turn's own limit firing keeps Forge's words.
    assert MaxToolFailurePerTurnLimitReached(3, {"patch": 3}, {"patch": 3}).describe() == (
        "Maximum tool failure limit (3) reached for this turn: patch (3)"
    )


async def test_per_tool_limit_reaches_the_interrupt_message(workspace: Path) -> None:
    config = ForgeConfig(shell=replace(ForgeConfig().shell, max_failures=2))
    h = Harness(workspace, FakeModel([tools(failing("shell", 1)), tools(failing("shell", 2))]), config)
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED
    assert summary.reason is not None
    assert "shell 2 ([tools.shell] max_failures)" in summary.reason.describe()
    assert "(3)" not in summary.reason.describe()


async def test_a_failed_request_is_counted(workspace: Path) -> None:
    h = Harness(workspace, FakeModel([ModelError("invalid api key", False, 401)]))
    summary = await h.run()
    assert summary.status is TurnStatus.FAILED
    assert summary.requests == 1
    line = format_event(h.of("turnFinished")[0].to_dict()) or ""
    assert line.startswith("■ turn failed: 1 request, 0 tool calls, 0 failures")


async def test_zero_attempts_notice_is_not_said_to_be_sent(workspace: Path) -> None:
    h = Harness(workspace, FakeModel([tools(failing("patch", i)) for i in range(3)] + [answer("never")]))
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED
    retries = h.of("retry")
    assert [(r.attempts_left, r.ends_turn) for r in retries] == [(2, False), (1, False), (0, True)]
    lines = [format_event(r.to_dict()) or "" for r in retries]
    assert "sent to the model with the next request" in lines[0] and "sent to the model" in lines[1]
    assert "sent to the model" not in lines[2] and "the turn stops here" in lines[2]


async def test_a_notice_in_the_batch_that_stops_the_turn_is_not_sent(workspace: Path) -> None:
    # shell reaches its own limit (1) while patch still has attempts: patch's notice goes nowhere now either.
    config = ForgeConfig(shell=replace(ForgeConfig().shell, max_failures=1))
    h = Harness(workspace, FakeModel([tools(failing("patch", 0), failing("shell", 1))]), config)
    await h.run()
    patch = next(r for r in h.of("retry") if r.tool == "patch")
    assert patch.attempts_left == 2 and patch.ends_turn
    assert "the turn stops here" in (format_event(patch.to_dict()) or "")


def test_transcript_interrupt_uses_the_readable_map(workspace: Path) -> None:
    writer = TranscriptWriter(workspace, "t1")
    writer.handle(Interrupt("t1", MaxToolFailurePerTurnLimitReached(3, {"patch": 3})))
    writer.close()
    text = writer.path.read_text()
    assert "{limit: 3, errors: {patch: 3}}" in text and "'patch'" not in text


def test_transcript_is_markdown_with_a_blank_line_around_each_heading(workspace: Path) -> None:
    # Issue 24 item 25: headings ran into the line above ("> Retry notice ...\n## Assistant"), which
    # Markdown renders as one paragraph. The tool-call line the diagnostics point at stays its heading.
    from forge_lsp.domain.events import AssistantText, Retry, ToolCallFinished, ToolCallStarted, TurnStarted

    writer = TranscriptWriter(workspace, "t1")
    writer.handle(TurnStarted("t1", "c1", "fix it", "scripted/x"))
    writer.handle(AssistantText("t1", "Let me look."))
    writer.handle(ToolCallStarted("t1", "shell", "call1", '{"command": "false"}', "shell: false"))
    writer.handle(ToolCallFinished("t1", "shell", "call1", False, "exit 1"))
    writer.handle(Retry("t1", "shell", "call1", 2, 3, "notice", "exit 1"))
    writer.handle(AssistantText("t1", "Again."))
    writer.handle(Interrupt("t1", MaxToolFailurePerTurnLimitReached(3, {"shell": 3})))
    writer.close()
    lines = writer.path.read_text().splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("#")]
    assert len(headings) == 6  # turn, prompt, assistant, tool call, assistant, interrupted
    for i in headings:
        assert i == 0 or lines[i - 1] == "", lines[i - 1 : i + 1]
        assert lines[i + 1] == "", lines[i : i + 2]
    assert lines[writer.call_lines["call1"]].startswith("### Tool call: shell: false")
    assert writer.interrupt_line is not None and lines[writer.interrupt_line].startswith("## Interrupted")


async def test_the_request_limit_is_said_as_a_person_would(workspace: Path) -> None:
    from forge_lsp.domain.events import MaxRequestPerTurnLimitReached

    h = Harness(
        workspace,
        FakeModel([tools(call("todo_read", "r1")), tools(call("todo_read", "r2"))]),
        ForgeConfig(max_requests_per_turn=2),
    )
    summary = await h.run()
    assert summary.status is TurnStatus.INTERRUPTED and isinstance(summary.reason, MaxRequestPerTurnLimitReached)
    assert summary.reason.to_dict() == {"kind": "MaxRequestPerTurnLimitReached", "limit": 2}  # the contract's shape
    text = summary.reason.describe()
    assert text == "The turn made 2 model requests, its limit (max_requests_per_turn), and stopped", text
    line = format_event(Interrupt("t", summary.reason).to_dict()) or ""
    assert "MaxRequestPerTurnLimitReached {limit: 2}" in line and text in line, line


def test_a_stop_hooks_reminder_line_shows_why_after_a_traceback() -> None:
    refusal = (
        "The stop hook `python3 check.py` did not let the turn end: Traceback (most recent call last):\n"
        '  File "check.py", line 3, in <module>\n'
        "AssertionError: 2 tests fail\n"
        "(1 of at most 3 such refusals this turn)"
    )
    line = format_event({"type": "reminder", "kind": "stopHook", "text": refusal})
    assert line.endswith("did not let the turn end: Traceback (most recent call last): … AssertionError: 2 tests fail"), line
    one = "The stop hook `x` did not let the turn end: run the tests first\n(1 of at most 3 such refusals this turn)"
    assert format_event({"type": "reminder", "kind": "stopHook", "text": one}).endswith(
        "did not let the turn end: run the tests first"
    )
