"""Events as readable lines: the CLI's output and the server's window/logMessage."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Mapping
from typing import Any, TextIO

from forge_lsp.domain.doom_loop import NOT_RUN
from forge_lsp.domain.events import REMINDER_KINDS, format_reason, own_prompt, range_lines
from forge_lsp.redact import redact


def _indent(text: str, prefix: str = "      ") -> str:
    return textwrap.indent(text.rstrip(), prefix)


def _count(n: Any, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def say(out: TextIO, text: str) -> None:
    """Print text (whole lines) for a person: every line the CLI prints goes through here, secrets redacted."""
    print(redact(text), file=out, flush=True)


def files_changed(n: Any) -> str:
    """How many files a turn changed, as the end of a turn says it: "0 files changed", "1 file changed"."""
    return f"{_count(n or 0, 'file')} changed"


def format_usage(usage: Any) -> str:
    """A usage wire dict as one phrase: 1234 prompt (200 cached) + 56 completion tokens, $0.0123."""
    if not isinstance(usage, Mapping):
        return "tokens unknown"
    cached = usage.get("cachedTokens") or 0
    written = usage.get("cacheWriteTokens") or 0
    parts = [f"{cached} cached"] if cached else []
    parts += [f"{written} written to the cache"] if written else []
    cached_text = f" ({', '.join(parts)})" if parts else ""
    cost = usage.get("cost")
    cost_text = f"${cost:.4f}" if isinstance(cost, int | float) and not isinstance(cost, bool) else "cost unknown"
    return (
        f"{usage.get('promptTokens', 0)} prompt{cached_text} + {usage.get('completionTokens', 0)} completion tokens, {cost_text}"
    )


def format_context(context: Mapping[str, Any]) -> str:
    """A turn's editor context as one phrase: main.py (lines 2-3); unsaved in the editor: a.py, b.py."""
    parts = []
    if context.get("file"):
        where = str(context["file"])
        lines = range_lines(context.get("range"))
        parts.append(f"{where} ({lines})" if lines else where)
    unsaved = context.get("unsaved")
    if isinstance(unsaved, list) and unsaved:
        parts.append("unsaved in the editor: " + ", ".join(map(str, unsaved)))
    return "; ".join(parts)


def format_event(event: Mapping[str, Any]) -> str | None:
    """One forge/event payload as readable lines (None for events shown elsewhere)."""
    kind = event.get("type")
    if kind == "turnStarted":
        # The user's own text; what the editor added (selection, unsaved diffs) as one line: the transcript has it.
        context = event.get("context")
        prompt = own_prompt(str(event.get("prompt", "")), context).replace("\n", "\n" + " " * len("  prompt: "))
        agent = event.get("agent")
        by = f", agent {agent}" if agent and agent != "forge" else ""
        lines = f"▶ turn {event['turnId']} started (model {event.get('model', '?')}{by})\n  prompt: {prompt}"
        return lines + (f"\n  context: {format_context(context)}" if isinstance(context, Mapping) and context else "")
    if kind in ("assistantText", "reasoning"):
        return None
    if kind == "toolCallStarted":
        return f"  → {event.get('title') or event.get('tool')}"
    if kind == "toolCallFinished":
        if event.get("ok"):
            return f"  ✓ {event['tool']} ok"
        cause = str(event.get("output", "")).split("<cause>", 1)[-1].split("</cause>", 1)[0]
        if cause.startswith(NOT_RUN):  # kept from running by the repeated-call stop: no failure of the tool's
            return f"  ⊘ {event['tool']} not run: {cause.removeprefix(NOT_RUN).split('. ', 1)[0]}"
        first = cause.strip().splitlines()[0] if cause.strip() else ""
        said = _last_said(cause) if _COMMAND_FAILED.match(first) else ""
        return f"  ✗ {event['tool']} failed: {first}" + (f" ({said})" if said else "")
    if kind == "retry":
        budget = f"{event['attemptsLeft']} of {event['limit']} attempts left"
        if event.get("endsTurn") or event.get("attemptsLeft") == 0:
            # No request follows: the notice is kept in the conversation, and the model reads it only on Continue.
            where = "the turn stops here; the notice is kept in the conversation for the next turn"
        else:
            where = "sent to the model with the next request"
        return f"  ↻ retry notice for {event['tool']} ({budget}), {where}:\n{_indent('<retry>' + event['notice'] + '</retry>')}"
    if kind == "llmRetry":
        return f"  ⟳ model request failed ({event['cause']}); retry {event['attempt']} in {event['delayMs']} ms"
    if kind == "usage":
        return None
    if kind == "contextWarning":
        return f"  ⚠ {event.get('message', '')}"
    if kind == "compacted":
        return (
            f"  ⇊ compacted {_count(event.get('messages', 0), 'message')} into a summary: "
            f"{event.get('beforeTokens')} -> {event.get('afterTokens')} tokens sent"
        )
    if kind == "modelNotice":
        mark = "ℹ" if event.get("level") == "info" else "⚠"
        return f"  {mark} {event.get('message', '')}"
    if kind == "reminder":
        what = REMINDER_KINDS.get(str(event.get("kind")), str(event.get("kind")))
        text = str(event.get("text", ""))
        return f"  ↺ reminder to the model ({what}): {reminder_line(text, event.get('kind') == 'stopHook')}"
    if kind == "hookError":
        return f"  ⚠ hook: {format_hook_error(event)}"
    if kind == "problems":
        return format_problems(event)
    if kind == "interrupt":
        return f"  ⛔ interrupted: {format_reason(event['reason'])}\n     {event.get('message', '')}"
    if kind == "turnFinished":
        s = event.get("summary", {})
        counts = ", ".join(
            _count(s.get(key, 0), noun)
            for key, noun in (("requests", "request"), ("toolCalls", "tool call"), ("failures", "failure"))
        )
        counts += ", " + files_changed(s.get("filesChanged", 0))
        if s.get("repliesCut"):
            cut = s["repliesCut"]
            counts += f", {cut} {'reply' if cut == 1 else 'replies'} cut at the token limit"
        line = f"■ turn {event.get('status')}: {counts}"
        if "usage" in s:
            line += f"; {format_usage(s['usage'])}"
        if s.get("error"):
            line += f"\n  error: {s['error']}"
        problems = s.get("problems")
        if isinstance(problems, Mapping) and problems.get("count"):
            files = [f"{f.get('path')} ({f.get('count')})" for f in problems.get("files", []) if isinstance(f, Mapping)]
            line += f"\n  left: {_count(problems['count'], 'new problem')} in {', '.join(files)}"
        return line
    return None


_COMMAND_FAILED = re.compile(r"command (exited with code -?\d+|timed out after )")
_STREAMS = re.compile(r"<(stderr|stdout)>(.*?)</\1>", re.S)
_NAMED_ERROR = re.compile(r"\b[A-Z]\w*(Error|Exception)\b")
LAST_SAID_CHARS = 160


def _last_said(output: str) -> str:
    """What a failed command said, for the line that tells of it: the last line that names an error ("AssertionError:
    -1 != 5", not unittest's "FAILED (failures=1)" after it; pytest's is on stdout, under a warning on stderr), its
    stderr's before its stdout's; else the last line of its stderr, or of its stdout ("stderr: cat: app.cfg: No such
    file or directory"); "" when it printed nothing. The model reads all of it."""
    streams = {m.group(1): m.group(2) for m in _STREAMS.finditer(output)}
    lines = {name: [line.strip() for line in streams.get(name, "").splitlines() if line.strip()] for name in ("stderr", "stdout")}
    found = next(
        ((name, line) for name in lines for line in reversed(lines[name]) if _NAMED_ERROR.search(line)),
        next(((name, said[-1]) for name, said in lines.items() if said), None),
    )
    if found is None:
        return ""
    name, line = found
    return f"{name}: {line if len(line) <= LAST_SAID_CHARS else line[: LAST_SAID_CHARS - 1] + '…'}"


def reminder_line(text: str, hook: bool = True) -> str:
    """A reminder in one line: its first; a stop hook's, its last too where it has more (a Python traceback starts
    "Traceback (most recent call last):" and ends with the error that says why), the count of refusals left out."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip() and not _REFUSALS.match(line.strip())]
    if not lines:
        return ""
    return lines[0] if len(lines) == 1 or not hook else f"{lines[0]} … {lines[-1]}"


_REFUSALS = re.compile(r"^\(\d+ of at most \d+ such refusals this turn\)$")


def format_hook_error(event: Mapping[str, Any]) -> str:
    """A hookError payload as one phrase: the stop hook `make check` (~/.config/forge-lsp/config.toml:7) exited 1: ..."""
    hook = event.get("hook")
    hook = hook if isinstance(hook, Mapping) else {}
    file = home_relative(str(hook["file"])) if hook.get("file") else None
    where = f"{file}:{hook['line']}" if file and hook.get("line") else file or hook.get("source", "?")
    call = f" for the {event['tool']} call" if event.get("tool") else ""
    return f"the {hook.get('event', '?')} hook `{hook.get('command', '')}` ({where}){call} {event.get('message', '')}"


def home_relative(path: str) -> str:
    """A path as a person writes it: ~/.config/... for a file in the home folder."""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path


def format_problems(event: Mapping[str, Any]) -> str:
    """A problems event: the editor's diagnostics of a file a call changed, once its language servers caught up."""
    count, path, waited = event.get("count", 0), event.get("path", ""), event.get("waitedMs", 0)
    late = "" if event.get("caughtUp", True) else ", its language servers had not reported yet"
    if not count:
        return f"  · editor: no new problems in {path} ({waited} ms{late})"
    failed = '; the call counts as failed ([verify] diagnostics = "fail")' if event.get("failed") else ""
    lines = [f"  ⚠ editor: {_count(count, 'new problem')} in {path} ({waited} ms{late}){failed}"]
    for problem in event.get("problems", []):
        if isinstance(problem, Mapping):
            origin = " ".join(str(problem[k]) for k in ("source", "code") if problem.get(k))
            where = f"{problem.get('path')}:{problem.get('line')}:{problem.get('column')}"
            lines.append(f"      {where}: {problem.get('severity')}{' ' + origin if origin else ''}: {problem.get('message')}")
    return "\n".join(lines)


REASONING_SHOWN = 300
"""How much of a reply's reasoning a log line shows (the transcript has it whole)."""


def reasoning_line(text: str) -> str | None:
    """A reply's reasoning as one line: its start, and how long it is when cut."""
    flat = " ".join(text.split())
    if not flat:
        return None
    if len(flat) <= REASONING_SHOWN:
        return f"  thinking: {flat}"
    return f"  thinking: {flat[:REASONING_SHOWN]}… ({len(text)} characters, whole in the transcript)"


STREAMED = ("assistantText", "reasoning")


class EventLines:
    """Events as lines for a person, the same for the CLI's output and the server's log: streamed
    assistant text (or reasoning) is gathered into one line per message, which the next event shown ends."""

    def __init__(self) -> None:
        self._kind = ""
        self._pieces: list[str] = []
        self.last_text = ""
        """The last assistant text given out as a line."""

    def feed(self, event: Mapping[str, Any]) -> list[str]:
        """The lines this event completes (none while a message is still being streamed)."""
        kind = str(event.get("type", ""))
        if kind in STREAMED:
            lines = self.flush() if self._kind != kind else []
            self._kind = kind
            self._pieces.append(str(event.get("text", "")))
            return lines
        line = format_event(event)
        if line is None:  # an event shown nowhere (usage) does not end the message being gathered
            return []
        return [*self.flush(), line]

    def flush(self) -> list[str]:
        """The message gathered so far, as a line (none when there is nothing to show)."""
        kind, text = self._kind, "".join(self._pieces)
        self._kind, self._pieces = "", []
        if kind == "reasoning":
            line = reasoning_line(text)
            return [line] if line is not None else []
        if not text.strip():
            return []
        self.last_text = text.strip()
        return [f"  assistant: {self.last_text}"]


class EventPrinter:
    """Prints events to a stream, a line each (streamed text gathered: EventLines)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lines = EventLines()

    @property
    def last_text(self) -> str:
        """The last assistant text printed (the CLI does not print the turn's answer a second time)."""
        return self.lines.last_text

    def __call__(self, event: Mapping[str, Any]) -> None:
        for line in self.lines.feed(event):
            say(self.out, line)

    def flush_text(self) -> None:
        """Print the message still being gathered, if any."""
        for line in self.lines.flush():
            say(self.out, line)
