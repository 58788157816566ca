"""Each turn's transcript, .forge/transcripts/<turnId>.md, written as the turn goes."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import IO

from forge_lsp.domain.doom_loop import was_not_run
from forge_lsp.domain.events import (
    AssistantText,
    Compacted,
    ContextWarning,
    Event,
    HookError,
    Interrupt,
    LlmRetry,
    ModelNotice,
    Reasoning,
    Reminder,
    Retry,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    range_lines,
)
from forge_lsp.redact import redact, secret_values
from forge_lsp.render import format_hook_error, format_usage
from forge_lsp.state.dirs import UnsafeStateDir, ensure_state_dir, user_state_dir

TRANSCRIPTS = "transcripts"
MAX_OUTPUT_CHARS = 4000


def transcripts_dir(root: Path) -> Path:
    """.forge/transcripts/, or the user's state folder when that is not a folder of the user's own.

    A cloned workspace may hold .forge or .forge/transcripts as a link to somewhere
    else (~/.ssh, a shell's startup folder): a transcript is never written through one.
    """
    try:
        folder = ensure_state_dir(root) / TRANSCRIPTS
        try:
            folder.mkdir()
        except FileExistsError:
            pass
        info = folder.lstat()
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            return folder
    except (UnsafeStateDir, OSError):
        pass
    folder = user_state_dir(root) / TRANSCRIPTS
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}\n"


def context_section(context: dict[str, object]) -> str:
    """The '## Context' entry: what the prompt carries from the editor (file, range, unsaved buffers); '' for none."""
    if not context:
        return ""
    lines = []
    if context.get("file"):
        lines.append(f"- file: {context['file']}")
    where = range_lines(context.get("range"))
    if where:
        lines.append(f"- range: {where}")
    unsaved = context.get("unsaved")
    if isinstance(unsaved, list) and unsaved:
        lines.append(f"- unsaved in the editor: {', '.join(map(str, unsaved))} (sent as the editor has them)")
    return "## Context\n\n" + "\n".join(lines) + "\n\n" if lines else ""


class TranscriptWriter:
    """Appends a turn's events as Markdown and remembers the line of each tool call.

    Each event is one write() of whole lines, flushed at once, so a reader
    (or a crash) never sees half an entry.
    """

    def __init__(self, root: Path, turn_id: str) -> None:
        self.path = transcripts_dir(root) / f"{turn_id}.md"
        # A new file, never through a link planted where it would go.
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self._fh: IO[str] | None = open(fd, "w", encoding="utf-8")  # noqa: SIM115 - closed on turnFinished
        self._lines = 0
        self._tail = "\n\n"
        """The last two characters written: an entry starts after a blank line (Markdown wants one before a heading)."""
        self._section: str | None = None
        """The streamed section being written ("Assistant" or "Reasoning"), if any."""
        self._secrets = secret_values()
        self.call_lines: dict[str, int] = {}
        """call id -> 0-based line of its heading."""
        self.interrupt_line: int | None = None

    def _write(self, text: str) -> int:
        """Write whole lines; returns the 0-based line where they start."""
        start = self._lines
        if self._fh is None:
            return start
        text = redact(text, self._secrets)
        if not text.endswith("\n"):
            text += "\n"
        self._fh.write(text)
        self._fh.flush()
        self._lines += text.count("\n")
        self._tail = (self._tail + text)[-2:]
        return start

    def _entry(self, text: str) -> int:
        """Write an entry of its own, after a blank line; returns the line where it starts."""
        if self._tail != "\n\n":
            self._write("\n")
        return self._write(text)

    def handle(self, event: Event) -> None:
        """Add one event to the transcript."""
        if isinstance(event, AssistantText | Reasoning):
            if self._fh is None:
                return
            section = "Assistant" if isinstance(event, AssistantText) else "Reasoning"
            if self._section != section:
                self._end_section()
                self._entry(f"## {section}\n\n")
                self._section = section
            piece = redact(event.text, self._secrets)
            self._fh.write(piece)
            self._fh.flush()
            self._lines += piece.count("\n")
            self._tail = (self._tail + piece)[-2:]
            return
        self._end_section()
        if isinstance(event, TurnStarted):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
            self._entry(
                f"# Forge turn {event.turn_id}\n\n- conversation: {event.conversation_id}\n- model: {event.model}\n"
                f"- started: {stamp}\n\n{context_section(event.context)}## Prompt\n\n{event.prompt}\n"
            )
        elif isinstance(event, ToolCallStarted):
            try:
                args = json.dumps(json.loads(event.arguments), indent=2, ensure_ascii=False)
            except ValueError:
                args = event.arguments
            line = self._entry(f"### Tool call: {event.title or event.tool} ({event.call_id})\n\n" + _fence(args, "json"))
            self.call_lines[event.call_id] = line
        elif isinstance(event, ToolCallFinished):
            output = event.output if len(event.output) <= MAX_OUTPUT_CHARS else event.output[:MAX_OUTPUT_CHARS] + "\n... [cut]"
            label = "Result" if event.ok else "Not run" if was_not_run(output) else "Failed"
            self._entry(f"**{label}:**\n\n" + _fence(output))
        elif isinstance(event, Retry):
            after = " (the turn stops here)" if event.ends_turn else ""
            self._entry(f"> Retry notice for {event.tool}: attempts remaining {event.attempts_left} of {event.limit}{after}\n")
        elif isinstance(event, LlmRetry):
            self._entry(f"> Model request failed ({event.cause}); retry {event.attempt} in {event.delay_ms} ms\n")
        elif isinstance(event, ContextWarning):
            self._entry(f"> Context: {event.message()}\n")
        elif isinstance(event, Compacted):
            self._entry(
                f"## Compacted\n\n{event.messages} earlier messages are sent as one summary from here on "
                f"({event.before_tokens} -> {event.after_tokens} tokens); the state database keeps them all.\n"
            )
        elif isinstance(event, ModelNotice):
            self._entry(f"> Model{' (info)' if event.level == 'info' else ''}: {event.message}\n")
        elif isinstance(event, Reminder):
            self._entry(f"## Reminder to the model ({event.describe()})\n\n{event.text.strip()}\n")
        elif isinstance(event, HookError):
            self._entry(f"> Hook error: {format_hook_error(event.to_dict())}\n")
        elif isinstance(event, Interrupt):
            self.interrupt_line = self._entry(
                f"## Interrupted: {event.reason.kind}\n\n{event.reason.describe()}\n\n`{event.reason.summary()}`\n"
            )
        elif isinstance(event, TurnFinished):
            summary = event.summary
            if summary is not None:
                extra = f"\n\n{summary.error}" if summary.error else ""
                cut = f", replies cut at the token limit: {summary.replies_cut}" if summary.replies_cut else ""
                self._entry(
                    f"## Turn {summary.status.value}\n\nrequests: {summary.requests}, tool calls: {summary.tool_calls}, "
                    f"failures: {summary.failures}, files changed: {summary.files_changed}{cut}{extra}\n\n"
                    f"usage: {format_usage(summary.usage.to_dict())}\n"
                )
                if summary.problems is not None:
                    self._entry(
                        f"## Problems left\n\nThe editor reports {summary.problems.describe()} that this turn's edits made:"
                        f"\n\n{_fence(summary.problems.lines())}"
                    )
            self.close()

    def note(self, text: str) -> None:
        """An entry of the runtime's own (the files the turn changed), after the last event's."""
        self._end_section()
        self._entry(text)

    def _end_section(self) -> None:
        if self._section is not None:
            self._section = None
            self._write("\n")

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            os.utime(self.path)


def append_note(root: Path, turn_id: str, text: str) -> bool:
    """Add an entry to an ended turn's transcript (its undo); False when there is none to add to."""
    path = transcripts_dir(root) / f"{turn_id}.md"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    with open(fd, "a", encoding="utf-8") as fh:
        fh.write("\n" + redact(text, secret_values()).rstrip("\n") + "\n")
    return True
