"""Pure translation of turn events into LSP values (lsprotocol only)."""

from __future__ import annotations

from lsprotocol import types as t

from forge_lsp.domain.events import (
    Interrupt,
    MaxRepeatedCallsReached,
    MaxToolFailurePerTurnLimitReached,
    Retry,
    ToolCallStarted,
)

SOURCE = "forge"
CODE_RETRY = "tool-retry"
CODE_MAX_TOOL_FAILURE = "max-tool-failure-per-turn"
CODE_MAX_REQUESTS = "max-requests-per-turn"
CODE_MAX_REPEATED = "max-repeated-calls-per-turn"


def line_range(line: int) -> t.Range:
    """A whole line (to column 0 of the next one)."""
    return t.Range(start=t.Position(line=line, character=0), end=t.Position(line=line + 1, character=0))


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of a text, cut to limit characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def retry_message(event: Retry, failures: int = 1) -> str:
    """The diagnostic message of a failed tool call: the tool, the error, the attempts remaining
    (and how many failures the diagnostic stands for, when more than one)."""
    times = f" ({failures} times this turn)" if failures > 1 else ""
    return f"{event.tool} failed{times}: {first_line(event.error)} (attempts remaining: {event.attempts_left} of {event.limit})"


def retry_diagnostic(event: Retry, line: int, failures: int = 1) -> t.Diagnostic:
    """The Warning for a failed tool call (for failures of them at one place of a file)."""
    data = {"turnId": event.turn_id, "tool": event.tool, "attemptsLeft": event.attempts_left, "limit": event.limit}
    if failures > 1:
        data["failures"] = failures
    return t.Diagnostic(
        range=line_range(line),
        message=retry_message(event, failures),
        severity=t.DiagnosticSeverity.Warning,
        source=SOURCE,
        code=CODE_RETRY,
        data=data,
    )


def interrupt_diagnostic(event: Interrupt, line: int) -> t.Diagnostic:
    """The Error for an interrupted turn."""
    if isinstance(event.reason, MaxToolFailurePerTurnLimitReached):
        code = CODE_MAX_TOOL_FAILURE
    elif isinstance(event.reason, MaxRepeatedCallsReached):
        code = CODE_MAX_REPEATED
    else:
        code = CODE_MAX_REQUESTS
    return t.Diagnostic(
        range=line_range(line),
        message=event.reason.describe(),
        severity=t.DiagnosticSeverity.Error,
        source=SOURCE,
        code=code,
        data={"turnId": event.turn_id, "reason": event.reason.to_dict()},
    )


def progress_report(event: ToolCallStarted | Retry) -> str:
    """The progress line: 'shell: pytest' for a call, 'retry 2/3 shell' for a failure."""
    if isinstance(event, Retry):
        return f"retry {event.attempts_left}/{event.limit} {event.tool}"
    return event.title or event.tool
