"""Turn events and interrupt reasons: typed values each surface renders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from forge_lsp.domain.messages import Usage
from forge_lsp.domain.problems import MAX_PROBLEM_LINES, Problem, ProblemsLeft, files_phrase, plural
from forge_lsp.domain.tool_catalog import ToolKind


def format_errors(errors: Mapping[str, int]) -> str:
    """The errors map as people read it (and the README shows it): {patch: 3, shell: 1}."""
    return "{" + ", ".join(f"{name}: {count}" for name, count in sorted(errors.items())) + "}"


def format_reason(reason: Mapping[str, Any]) -> str:
    """An interrupt reason's wire dict as one line: MaxToolFailurePerTurnLimitReached {limit: 3, errors: {patch: 3}}."""
    fields = [f"limit: {reason.get('limit')}"]
    errors = reason.get("errors")
    if isinstance(errors, Mapping):
        fields.append(f"errors: {format_errors(errors)}")
    if "tool" in reason:
        fields.append(f"tool: {reason['tool']}")
    return f"{reason.get('kind')} {{{', '.join(fields)}}}"


@dataclass(frozen=True)
class MaxToolFailurePerTurnLimitReached:
    """A tool failed in max_tool_failure_per_turn consecutive batches."""

    limit: int
    errors: dict[str, int]
    tool_limits: Mapping[str, int] = field(default_factory=dict, compare=False)
    """The limit of each tool that reached it, where [tools.<name>] max_failures differs from ``limit``.

    Not on the wire (the contract's shape is {kind, limit, errors}); it lets the message name the limit that fired."""
    limit_keys: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The [tools.<key>] that set a tool's own limit, where it is a glob ("mcp_github_*"), not the tool's name."""
    kind: ClassVar[str] = "MaxToolFailurePerTurnLimitReached"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the reason."""
        return {"kind": self.kind, "limit": self.limit, "errors": dict(self.errors)}

    def summary(self) -> str:
        """One line: MaxToolFailurePerTurnLimitReached {limit: 3, errors: {patch: 3}}."""
        return format_reason(self.to_dict())

    def describe(self) -> str:
        """A sentence for people, as Forge's CLI words it, naming the limit that fired."""
        tools = ", ".join(f"{n} ({c})" for n, c in sorted(self.errors.items()) if c)
        own = {n: v for n, v in sorted(self.tool_limits.items()) if v != self.limit}
        if not own:
            return f"Maximum tool failure limit ({self.limit}) reached for this turn: {tools}"
        # A per-tool limit fired: say which, or the user looks for 3 failures where there were 2.
        fired = ", ".join(f"{n} {v} ([tools.{self._table(n)}] max_failures)" for n, v in own.items())
        if len(own) < len(self.tool_limits):
            fired += f", {self.limit} (max_tool_failure_per_turn)"
        return f"Maximum tool failure limit reached for this turn ({fired}): {tools}"

    def _table(self, name: str) -> str:
        key = self.limit_keys.get(name, name)
        return f'"{key}"' if any(c in key for c in '*?[."') else key


@dataclass(frozen=True)
class MaxRequestPerTurnLimitReached:
    """The turn made max_requests_per_turn model requests."""

    limit: int
    kind: ClassVar[str] = "MaxRequestPerTurnLimitReached"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the reason."""
        return {"kind": self.kind, "limit": self.limit}

    def summary(self) -> str:
        """One line: MaxRequestPerTurnLimitReached {limit: 100}."""
        return format_reason(self.to_dict())

    def describe(self) -> str:
        """A sentence for people."""
        return f"The turn made {self.limit} model requests, its limit (max_requests_per_turn), and stopped"


@dataclass(frozen=True)
class MaxRepeatedCallsReached:
    """The same tool call (same tool, same normalized arguments), or the same sequence of calls, was made
    max_repeated_calls_per_turn times in a row; the call that reached the limit was not run."""

    limit: int
    tool: str
    """The tool of the call that reached the limit (the one not run)."""
    pattern: tuple[str, ...] = field(default=(), compare=False)
    """The tools of the repeating sequence, where it is more than the one call. Not on the wire."""
    kind: ClassVar[str] = "MaxRepeatedCallsReached"

    def to_dict(self) -> dict[str, Any]:
        """The wire shape of the reason."""
        return {"kind": self.kind, "limit": self.limit, "tool": self.tool}

    def summary(self) -> str:
        """One line: MaxRepeatedCallsReached {limit: 6, tool: write}."""
        return format_reason(self.to_dict())

    def describe(self) -> str:
        """A sentence for people: what repeated, and that the last call was not run."""
        if len(self.pattern) > 1:
            what = f"the same {len(self.pattern)} calls ({', '.join(self.pattern)}) were made {self.limit} times in a row"
        else:
            what = f"{self.tool} was called {self.limit} times in a row with the same arguments"
        return f"Repeated call limit ({self.limit}) reached for this turn: {what}; the last {self.tool} call was not run"


InterruptReason = MaxToolFailurePerTurnLimitReached | MaxRequestPerTurnLimitReached | MaxRepeatedCallsReached


class TurnStatus(StrEnum):
    """How a turn ended."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True)
class TurnSummary:
    """The result of forge.run: how the turn ended and what it did."""

    turn_id: str
    conversation_id: str
    status: TurnStatus
    reason: InterruptReason | None
    requests: int
    tool_calls: int
    failures: int
    text: str
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    """The tokens and cost of every model request of the turn."""
    timing: dict[str, float] = field(default_factory=dict, compare=False)
    """Where the time went (ms); for logs and benchmarks, not part of the result."""
    files_changed: int = 0
    """How many workspace files the turn changed (written, patched, removed; by the shell too)."""
    replies_cut: int = 0
    """How many of the model's replies stopped at the token limit (finish_reason "length")."""
    problems: ProblemsLeft | None = None
    """The new problems the editor reports in the files the turn changed, as the turn leaves them (None: none)."""

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (camelCase keys, as the LSP contract gives it)."""
        out: dict[str, Any] = {
            "turnId": self.turn_id,
            "conversationId": self.conversation_id,
            "status": self.status.value,
            "requests": self.requests,
            "toolCalls": self.tool_calls,
            "failures": self.failures,
            "filesChanged": self.files_changed,
            "repliesCut": self.replies_cut,
            "text": self.text,
            "usage": self.usage.to_dict(),
        }
        if self.reason is not None:
            out["reason"] = self.reason.to_dict()
        if self.error is not None:
            out["error"] = self.error
        if self.problems is not None:
            out["problems"] = self.problems.to_dict()
        return out


@dataclass(frozen=True)
class Event:
    """Base of every turn event; ``type`` is its name on the wire."""

    turn_id: str
    type: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        """The event's own fields, camelCase, without type and turnId."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The forge/event notification payload."""
        return {"type": self.type, "turnId": self.turn_id, **self.payload()}


EDITOR_CONTEXT_HEADING = "Context from the editor:"
"""The line that starts what a turn's prompt carries from the editor, after the user's own text."""


def range_lines(rng: Any) -> str | None:
    """An LSP Range as 'line 3' or 'lines 3-5' (1-based; a whole-line selection ending at character 0 of the
    next line ends on the line before); None when it is not a range."""
    try:
        start, end = int(rng["start"]["line"]) + 1, int(rng["end"]["line"]) + 1
        if end > start and int(rng["end"].get("character", 1)) == 0:
            end -= 1
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return f"line {start}" if start == end else f"lines {start}-{end}"


def own_prompt(prompt: str, context: Mapping[str, Any] | None) -> str:
    """The user's own text of a prompt that carries the editor's context (the prompt as it is without one)."""
    if not context:
        return prompt
    cut = prompt.rfind(f"\n\n{EDITOR_CONTEXT_HEADING}\n")
    return prompt[:cut] if cut >= 0 else prompt


@dataclass(frozen=True)
class TurnStarted(Event):
    """A turn began."""

    conversation_id: str = ""
    prompt: str = ""
    model: str = ""
    context: dict[str, Any] = field(default_factory=dict, hash=False)
    """What the prompt carries from the editor: {file?, range?, unsaved?} (none: {})."""
    agent: str = ""
    """The agent running the turn (its id; "" when unknown)."""
    type: ClassVar[str] = "turnStarted"

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conversationId": self.conversation_id, "prompt": self.prompt, "model": self.model}
        if self.context:
            out["context"] = self.context
        if self.agent:
            out["agent"] = self.agent
        return out


@dataclass(frozen=True)
class AssistantText(Event):
    """A piece of streamed assistant text."""

    text: str = ""
    type: ClassVar[str] = "assistantText"

    def payload(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass(frozen=True)
class Reasoning(Event):
    """A piece of the model's streamed reasoning (a reasoning model's reasoning_content)."""

    text: str = ""
    type: ClassVar[str] = "reasoning"

    def payload(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass(frozen=True)
class ToolCallStarted(Event):
    """A tool call is about to run."""

    tool: str = ""
    call_id: str = ""
    arguments: str = ""
    title: str = ""
    kind: ToolKind = "other"
    """What the call is (its catalog entry's kind, ACP's names: edit, delete, execute...): an editor shows a
    call by it, with no list of tool names of its own."""
    type: ClassVar[str] = "toolCallStarted"

    def payload(self) -> dict[str, Any]:
        return {"tool": self.tool, "callId": self.call_id, "arguments": self.arguments, "title": self.title, "kind": self.kind}


MAX_EVENT_OUTPUT = 20_000
"""Characters of a tool's output carried by a toolCallFinished notification (the model gets all of it)."""


def clip(text: str, limit: int = MAX_EVENT_OUTPUT) -> str:
    """text cut to limit characters, saying how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]}\n... [{len(text) - limit} more characters]"


@dataclass(frozen=True)
class ToolCallFinished(Event):
    """A tool call ended; ``ok`` is False for a failure."""

    tool: str = ""
    call_id: str = ""
    ok: bool = True
    output: str = ""
    path: str | None = None
    kind: ToolKind = "other"
    """As the call's toolCallStarted said: with ``ok`` and an edit or delete kind, ``path`` is a file it changed."""
    type: ClassVar[str] = "toolCallFinished"

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool": self.tool,
            "callId": self.call_id,
            "ok": self.ok,
            "output": clip(self.output),
            "kind": self.kind,
        }
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True)
class TranscriptPlace:
    """Where the turn's transcript tells of an event: its file and 0-based line (the frontends' diagnostics point
    there). Given by the core once the transcript has it; never on the wire."""

    path: str
    line: int


@dataclass(frozen=True)
class Retry(Event):
    """A failed tool call got a retry notice telling the model its budget."""

    tool: str = ""
    call_id: str = ""
    attempts_left: int = 0
    limit: int = 0
    notice: str = ""
    error: str = ""
    path: str | None = None
    ends_turn: bool = False
    """The turn stops after this batch (a limit, followup, the request cap): no request carries the notice now."""
    transcript: TranscriptPlace | None = field(default=None, compare=False)
    type: ClassVar[str] = "retry"

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool": self.tool,
            "callId": self.call_id,
            "attemptsLeft": self.attempts_left,
            "limit": self.limit,
            "notice": self.notice,
            "error": self.error,
            "endsTurn": self.ends_turn,
        }
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True)
class LlmRetry(Event):
    """A model request failed in a retryable way and will be sent again."""

    attempt: int = 0
    delay_ms: int = 0
    cause: str = ""
    type: ClassVar[str] = "llmRetry"

    def payload(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "delayMs": self.delay_ms, "cause": self.cause}


@dataclass(frozen=True)
class Interrupt(Event):
    """The turn was interrupted by a limit."""

    reason: InterruptReason = field(default_factory=lambda: MaxRequestPerTurnLimitReached(0))
    transcript: TranscriptPlace | None = field(default=None, compare=False)
    type: ClassVar[str] = "interrupt"

    def payload(self) -> dict[str, Any]:
        return {"reason": self.reason.to_dict(), "message": self.reason.describe()}


@dataclass(frozen=True)
class UsageReport(Event):
    """One model request's tokens and cost, and the turn's so far."""

    request: Usage = field(default_factory=Usage)
    turn: Usage = field(default_factory=Usage)
    type: ClassVar[str] = "usage"

    def payload(self) -> dict[str, Any]:
        return {**self.request.to_dict(), "turn": self.turn.to_dict()}


CONTEXT_WARNING_RATIO = 0.8
"""A request whose prompt passes this share of the model's context window gets a contextWarning."""


@dataclass(frozen=True)
class ContextWarning(Event):
    """A request's prompt passed CONTEXT_WARNING_RATIO of the model's context window."""

    prompt_tokens: int = 0
    context_window: int = 0
    type: ClassVar[str] = "contextWarning"

    @property
    def percent(self) -> int:
        """How full the window is, in whole percent."""
        return int(100 * self.prompt_tokens / self.context_window) if self.context_window else 0

    def message(self) -> str:
        """A sentence for people."""
        return (
            f"the conversation fills {self.percent}% of the model's context window "
            f"({self.prompt_tokens} of {self.context_window} tokens): compact it (forge.compact) or start a new one"
        )

    def payload(self) -> dict[str, Any]:
        return {
            "promptTokens": self.prompt_tokens,
            "contextWindow": self.context_window,
            "percent": self.percent,
            "message": self.message(),
        }


@dataclass(frozen=True)
class Compacted(Event):
    """Older messages were replaced by a summary in what the model is sent (the record keeps them)."""

    before_tokens: int = 0
    after_tokens: int = 0
    messages: int = 0
    """How many messages of the history the summary replaced."""
    type: ClassVar[str] = "compacted"

    def payload(self) -> dict[str, Any]:
        return {"beforeTokens": self.before_tokens, "afterTokens": self.after_tokens, "messages": self.messages}


@dataclass(frozen=True)
class ModelNotice(Event):
    """Something about the model or its server the user should know and can act on, said once (a server that
    drops the tools, cannot stream with them, a context window the fixed prompt fills) or as it happens (a
    reply cut at the token limit). ``level`` "info" is for the log: forge-lsp adapted, nothing was lost."""

    code: str = ""
    message: str = ""
    level: str = "warning"
    type: ClassVar[str] = "modelNotice"

    def payload(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "level": self.level}


REMINDER_KINDS = {"doomLoop": "doom loop", "pendingTodos": "pending todos", "stopHook": "stop hook"}
"""Each reminder's kind on the wire, and in words."""


@dataclass(frozen=True)
class Reminder(Event):
    """A turn policy reminded the model (a <system_reminder> it reads with its next request): the same call
    repeated (doomLoop), todos still open as it answered (pendingTodos)."""

    kind: str = ""
    text: str = ""
    type: ClassVar[str] = "reminder"

    def payload(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text}

    def describe(self) -> str:
        """The reminder's kind in words ("doom loop")."""
        return REMINDER_KINDS.get(self.kind, self.kind)


@dataclass(frozen=True)
class HookError(Event):
    """A hook of the user's went wrong: it exited with a code other than 0 and 2, timed out or would not start (the
    call or the turn went on as if it had not run), or a stop hook refused the turn's end past [hooks]
    max_stop_blocks (the turn ended). Told to the user, never to the model."""

    hook: str = ""
    """The hook's event: pre_tool, post_tool or stop."""
    command: str = ""
    """Its command, as one short line."""
    source: str = ""
    """Where it was set: user or workspace."""
    file: str | None = None
    line: int | None = None
    tool: str | None = None
    """The tool call it ran for (pre_tool, post_tool)."""
    call_id: str | None = None
    message: str = ""
    first: bool = True
    """This hook's first error in the turn (a frontend that pops a message up does it once)."""
    type: ClassVar[str] = "hookError"

    def payload(self) -> dict[str, Any]:
        hook: dict[str, Any] = {"event": self.hook, "command": self.command, "source": self.source}
        if self.file is not None:
            hook["file"] = self.file
        if self.line is not None:
            hook["line"] = self.line
        out: dict[str, Any] = {"hook": hook, "message": self.message, "first": self.first}
        if self.tool is not None:
            out["tool"] = self.tool
        if self.call_id is not None:
            out["callId"] = self.call_id
        return out


@dataclass(frozen=True)
class EditorProblems(Event):
    """The editor's diagnostics of a file a call changed, once its language servers caught up with the edit:
    the problems it has that it did not have before the turn's first edit of it (core/editor_check.py)."""

    tool: str = ""
    call_id: str = ""
    path: str = ""
    problems: tuple[Problem, ...] = ()
    waited_ms: int = 0
    """How long the editor took to answer (its language servers catching up with the edit)."""
    caught_up: bool = True
    """False: wait_ms passed before they reported on the edit (the problems are what the editor had then)."""
    failed: bool = False
    """The call was made a failed one for them ([verify] diagnostics = "fail")."""
    type: ClassVar[str] = "problems"

    def describe(self) -> str:
        """One line: "2 new problems in app.py", "no new problems in app.py"."""
        if not self.problems:
            return f"no new problems in {self.path}"
        return f"{plural(len(self.problems), 'new problem')} in {files_phrase(sorted({p.path for p in self.problems}))}"

    def payload(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "callId": self.call_id,
            "path": self.path,
            "count": len(self.problems),
            "problems": [p.to_dict() for p in self.problems[:MAX_PROBLEM_LINES]],
            "waitedMs": self.waited_ms,
            "caughtUp": self.caught_up,
            "failed": self.failed,
        }


@dataclass(frozen=True)
class TurnFinished(Event):
    """The turn ended; ``summary`` is what forge.run returns."""

    summary: TurnSummary | None = None
    type: ClassVar[str] = "turnFinished"

    def payload(self) -> dict[str, Any]:
        if self.summary is None:
            return {}
        out = {
            "status": self.summary.status.value,
            "usage": self.summary.usage.to_dict(),
            "summary": self.summary.to_dict(),
        }
        if self.summary.problems is not None:
            out["problems"] = self.summary.problems.to_dict()
        return out


TurnEvent = (
    TurnStarted
    | AssistantText
    | ToolCallStarted
    | ToolCallFinished
    | Retry
    | LlmRetry
    | UsageReport
    | ContextWarning
    | Compacted
    | ModelNotice
    | Reminder
    | HookError
    | EditorProblems
    | Interrupt
    | TurnFinished
)
