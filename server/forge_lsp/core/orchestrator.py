"""The turn loop: model request, tool calls, failure tracking, retry notices, interrupts.

The orchestrator receives its model, tools, templates and history; it never
constructs them, and it reports what happens only through typed events.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from forge_lsp.core.compaction import Compactor, build_wire, window_threshold
from forge_lsp.core.hooks import TurnHook, default_hooks
from forge_lsp.core.user_hooks import UserHooks
from forge_lsp.domain import doom_loop, tool_catalog
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import (
    CONTEXT_WARNING_RATIO,
    AssistantText,
    Compacted,
    ContextWarning,
    Event,
    Interrupt,
    InterruptReason,
    LlmRetry,
    MaxRepeatedCallsReached,
    MaxRequestPerTurnLimitReached,
    MaxToolFailurePerTurnLimitReached,
    ModelNotice,
    Reasoning,
    Reminder,
    Retry,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    TurnStatus,
    TurnSummary,
    UsageReport,
)
from forge_lsp.domain.messages import (
    MAX_REPLY_CHARS,
    REPLY_CUT,
    REPLY_CUT_MARKER,
    AssistantReply,
    ChatMessage,
    Compaction,
    Notice,
    ToolCall,
    ToolResult,
    Usage,
    describe,
)
from forge_lsp.domain.ports import HistoryPort, ModelPort, TemplatePort, ToolPort
from forge_lsp.domain.problems import ProblemsLeft
from forge_lsp.domain.retry import UNSENT, ModelError, total_budget_s, with_retry
from forge_lsp.domain.template_names import ERROR_REFLECTION, RETRY_MESSAGE
from forge_lsp.domain.tokens import CHARS_PER_TOKEN
from forge_lsp.domain.tracker import ToolErrorTracker

log = logging.getLogger(__name__)

HOLD_BACK_MAX = 4096
"""A streamed word is held back up to this many characters (a key is far shorter)."""
WORD_ENDS = (" ", "\n", "\t", ".", ",", ";", "!", "?", ")", "]", "}", '"', "'", "`")

Emit = Callable[[Event], None]

CANCELLED_RESULT = "the tool call was cancelled: the user cancelled the turn before it returned"
NOT_RUN_REPEATED = doom_loop.NOT_RUN + (
    "{what} was made {limit} times in a row, the limit (max_repeated_calls_per_turn), and the turn was "
    "interrupted. Do not make the same call again: change the approach, or answer with what you have"
)
NOT_RUN_AFTER = (
    doom_loop.NOT_RUN + "an earlier call of this reply reached max_repeated_calls_per_turn and the turn was interrupted"
)


def tool_call_error(cause: str, reflection: str) -> str:
    """The failed output the model sees, as Forge composes it."""
    return f"<tool_call_error><cause>{cause}</cause><reflection>{reflection}</reflection></tool_call_error>"


def with_notice(output: str, notice: str) -> str:
    """A failed output with its retry notice appended."""
    return f"{output}\n<retry>{notice}</retry>"


class _Streamed:
    """Streamed pieces (text or reasoning) on their way to the events, bounded at MAX_REPLY_CHARS.

    A word still being streamed is held back until it ends (whitespace or punctuation after it):
    a key streamed in two pieces then reaches every surface, and its redaction, whole. Past the
    cap nothing more is shown: the marker ends the text, as it ends the stored reply.
    """

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.held: list[str] = []
        self.streamed = 0

    def restart(self) -> None:
        """A new attempt of the request: the count starts over."""
        self.streamed = 0

    def add(self, piece: str) -> None:
        if self.streamed > MAX_REPLY_CHARS:
            return
        piece = piece[: MAX_REPLY_CHARS - self.streamed + 1]
        self.streamed += len(piece)
        if self.streamed > MAX_REPLY_CHARS:
            self.held.append(piece[:-1])
            self.held.append(REPLY_CUT_MARKER)
            self.flush()
            return
        self.held.append(piece)
        text = "".join(self.held)
        cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t")) + 1
        if text.endswith(WORD_ENDS) or len(text) - cut >= HOLD_BACK_MAX:
            cut = len(text)
        if cut == 0:
            return
        self.held[:] = [text[cut:]] if cut < len(text) else []
        self.out(text[:cut])

    def flush(self) -> None:
        """Send what is held (the request ended)."""
        if self.held:
            text = "".join(self.held)
            self.held.clear()
            self.out(text)


@dataclass
class TurnRequest:
    """What one turn is asked to do."""

    turn_id: str
    conversation_id: str
    prompt: str
    model: str = ""
    system_context: Mapping[str, Any] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)
    """What the prompt carries from the editor: {file?, range?, unsaved?} (lsp/selection.py)."""
    agent: str = ""
    """The agent running the turn (its id), for the events."""


@dataclass
class _Turn:
    request: TurnRequest
    tracker: ToolErrorTracker
    wire: list[dict[str, Any]]
    history: list[ChatMessage]
    requests: int = 0
    tool_calls: int = 0
    failures: int = 0
    texts: list[str] = field(default_factory=list)
    signatures: list[tuple[str, str]] = field(default_factory=list)
    """This turn's last tool calls (name, normalized arguments), for the doom-loop checks; kept as messages are
    appended."""
    own_calls: int = 0
    """How many of the calls in ``signatures`` are this turn's: the hard stop counts only those (Continue starts over)."""
    repeated: tuple[int, int] | None = None
    """The latest reply's call that reached max_repeated_calls_per_turn (index, pattern size): it and the rest stay unrun."""
    hooks: list[TurnHook] = field(default_factory=list)
    """This turn's policies (core/hooks), each with its own state for the turn."""
    started: float = field(default_factory=time.perf_counter)
    model_s: float = 0.0
    tools_s: float = 0.0
    prefix: list[dict[str, Any]] = field(default_factory=list)
    """What every request sends before the history: the system prompt."""
    compactions: list[Compaction] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    warned: bool = False
    """A contextWarning was sent this turn (once is enough)."""
    replies_cut: int = 0
    """Replies that stopped at the token limit."""


class Orchestrator:
    """Runs one turn at a time over the ports it is given."""

    def __init__(
        self,
        config: ForgeConfig,
        model: ModelPort,
        tools: ToolPort,
        templates: TemplatePort,
        history: HistoryPort,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        system_prompt: str | None = None,
        workspace_context: str = "",
        hooks: Callable[[TemplatePort, ToolPort], list[TurnHook]] = default_hooks,
        files_changed: Callable[[str], int] | None = None,
        user_hooks: UserHooks | None = None,
        problems_left: Callable[[], ProblemsLeft | None] | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.tools = tools
        self.templates = templates
        self.store = history
        self.sleep = sleep
        self.system_prompt = system_prompt
        self.workspace_context = workspace_context
        """What the model is told of the workspace, at the start of the conversation (after the fixed prefix)."""
        self.hooks = hooks
        """Makes each turn's policies (new ones per turn: a hook keeps state for its turn)."""
        self.files_changed = files_changed
        """How many files a turn (by id) changed, for its summary (the runtime keeps the record)."""
        self.user_hooks = user_hooks
        """The user's [[hooks]] of this turn (core/user_hooks.py): around each tool call, and where the turn would end."""
        self.problems_left = problems_left
        """The new problems the editor reports in the files the turn changed, for its summary (core/editor_check.py)."""

    async def run(self, request: TurnRequest, emit: Emit) -> TurnSummary:
        """Run a turn to its end: completed, interrupted, cancelled or failed. Never raises."""
        turn_id = request.turn_id
        emit(TurnStarted(turn_id, request.conversation_id, request.prompt, request.model, dict(request.context), request.agent))
        turn: _Turn | None = None
        status, reason, error = TurnStatus.FAILED, None, None
        try:
            turn = self._start(request)
            await self._prepare(turn, emit)
            status, reason = await self._loop(turn, emit)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            status = TurnStatus.CANCELLED
        except ModelError as exc:
            error = f"model request failed: {exc}"
        except Exception as exc:  # a broken template or store ends the turn, not the server
            log.exception("turn %s failed", turn_id)
            error = f"{type(exc).__name__}: {exc}"
        summary = TurnSummary(
            turn_id=turn_id,
            conversation_id=request.conversation_id,
            status=status,
            reason=reason,
            requests=turn.requests if turn else 0,
            tool_calls=turn.tool_calls if turn else 0,
            failures=turn.failures if turn else 0,
            text="\n\n".join(t.strip() for t in (turn.texts if turn else []) if t.strip()),
            error=error,
            # No reply accounted (none came, or the turn failed or was cancelled first): its cost is not known.
            usage=turn.usage if turn and turn.usage.requests else Usage(cost=None),
            timing=self._timing(turn),
            files_changed=self._files_changed(turn_id),
            replies_cut=turn.replies_cut if turn else 0,
            problems=self.problems_left() if self.problems_left is not None else None,
        )
        if reason is not None:
            emit(Interrupt(turn_id, reason))
        emit(TurnFinished(turn_id, summary))
        return summary

    def _files_changed(self, turn_id: str) -> int:
        if self.files_changed is None:
            return 0
        try:
            return self.files_changed(turn_id)
        except Exception:  # the count is a nicety of the summary: the turn's end must not fail for it
            log.exception("counting the files turn %s changed", turn_id)
            return 0

    async def _prepare(self, turn: _Turn, emit: Emit) -> None:
        """The model port's look at the turn before its first request (a local server's context window, a
        prompt too big for it): what it says the user should know, as modelNotice events."""
        prepare = getattr(self.model, "prepare", None)
        if prepare is None:
            return
        try:
            notices = await prepare(turn.prefix, self.tools.schemas())
        except Exception:  # learning the window is a nicety: the request says what is wrong, if anything is
            log.exception("preparing the model for turn %s", turn.request.turn_id)
            return
        for notice in notices:
            self._notice(turn, notice, emit)

    def _notice(self, turn: _Turn, notice: Notice, emit: Emit) -> None:
        emit(ModelNotice(turn.request.turn_id, notice.code, notice.message, notice.level))

    def _cut_limit(self) -> str:
        if self.config.max_tokens is not None:
            return f"max_tokens = {self.config.max_tokens}"
        return "the model server's own output limit (llama-server -n, Ollama num_predict; max_tokens sets one)"

    def _cut(self, turn: _Turn, reply: AssistantReply, emit: Emit) -> None:
        """A reply that stopped at the token limit: said as it happens, counted for the turn's end."""
        turn.replies_cut += 1
        what = "tool call" if reply.tool_calls else "reply"
        message = f"the model's {what} was cut at the token limit ({self._cut_limit()})"
        if not reply.tool_calls:
            message += ": its answer is incomplete; raise the limit, or ask for a shorter answer"
        self._notice(turn, Notice(REPLY_CUT, message), emit)

    def _cut_call(self, call: ToolCall) -> ToolResult:
        """The failure of a tool call whose arguments the token limit cut off."""
        got = len(call.arguments_json or "")
        return ToolResult(
            call.id,
            call.name,
            f"the reply was cut at the token limit ({self._cut_limit()}) before this {call.name} call's arguments were "
            f"complete ({got} characters of JSON arrived, not a whole object): make the call again with less in it "
            "(e.g. write a large file in parts, with patch)",
            True,
        )

    @staticmethod
    def _timing(turn: _Turn | None) -> dict[str, float]:
        """Where the turn's time went, in ms: the model, the tools, and the loop itself."""
        if turn is None:
            return {}
        total = (time.perf_counter() - turn.started) * 1000
        model, tools = turn.model_s * 1000, turn.tools_s * 1000
        return {"totalMs": total, "modelMs": model, "toolsMs": tools, "overheadMs": total - model - tools}

    def _start(self, request: TurnRequest) -> _Turn:
        history = self.store.history(request.conversation_id)
        turn = _Turn(
            request=request,
            tracker=ToolErrorTracker(self.config.max_tool_failure_per_turn, self.config.per_tool_limits()),
            wire=[],
            history=history,
            hooks=self.hooks(self.templates, self.tools),
        )
        if self.system_prompt:
            turn.prefix.append({"role": "system", "content": self.system_prompt})
        turn.compactions = self.store.compactions(request.conversation_id)
        # The reminder and the stop count this turn's calls: the user's new prompt (Continue too) starts over. Counted
        # over the conversation, a request the user made again ("run the tests") told the model it was looping.
        turn.signatures = []
        self._append(turn, ChatMessage("user", request.prompt))
        # Built with the prompt in the history: a new conversation's first message is the prompt the context opens.
        turn.wire = build_wire(turn.prefix, turn.history, turn.compactions, self.workspace_context)
        return turn

    def _append(self, turn: _Turn, message: ChatMessage) -> int:
        row = self.store.append(turn.request.conversation_id, turn.request.turn_id, message)
        turn.history.append(message)
        turn.wire.append(message.to_dict())
        if message.tool_calls:
            turn.signatures.extend(doom_loop.signature(c) for c in message.tool_calls)
            turn.own_calls += len(message.tool_calls)
            del turn.signatures[: -self._window()]
        return row

    def _window(self) -> int:
        return doom_loop.window(self.config.max_repeated_calls_per_turn)

    async def _loop(self, turn: _Turn, emit: Emit) -> tuple[TurnStatus, InterruptReason | None]:
        turn_id = turn.request.turn_id
        while True:
            for hook in turn.hooks:
                self._remind(turn, hook, hook.before_request(turn), emit)
            self._compact(turn, emit)
            # Counted when sent: a request that fails (or is cancelled) was still made; one that never left
            # (no API key, no script file) was not.
            turn.requests += 1
            try:
                reply = await self._request(turn, emit)
            except ModelError as exc:
                if exc.kind in UNSENT:
                    turn.requests -= 1
                raise
            self._account(turn, reply.usage, emit)
            for notice in reply.notices:
                self._notice(turn, notice, emit)
            if reply.cut:
                self._cut(turn, reply, emit)
            if reply.text:
                turn.texts.append(reply.text)
            self._append(turn, reply.to_message())
            if not reply.tool_calls:
                reminders = [(hook, hook.on_answer(turn)) for hook in turn.hooks]
                if any(r for _, r in reminders):
                    for hook, reminder in reminders:
                        self._remind(turn, hook, reminder, emit)
                    continue
                if self.user_hooks and (refusal := await self.user_hooks.stop(emit)):
                    self._append(turn, ChatMessage("user", f"<system_reminder>{refusal}</system_reminder>"))
                    emit(Reminder(turn_id, "stopHook", refusal))
                    if turn.requests >= self.config.max_requests_per_turn:
                        return TurnStatus.INTERRUPTED, MaxRequestPerTurnLimitReached(self.config.max_requests_per_turn)
                    continue
                return TurnStatus.COMPLETED, None
            turn.repeated = self._repeated(turn, reply)
            run = reply if turn.repeated is None else replace(reply, tool_calls=reply.tool_calls[: turn.repeated[0]])
            yields = await self._run_tools(turn, run, emit) if run.tool_calls else False
            if turn.repeated is not None:
                self._not_run(turn, reply, emit)
            if turn.tracker.limit_reached():
                tracker = turn.tracker
                errors = {n: tracker.error_count(n) for n in tracker.errors()}
                fired = {n: tracker.limit_for(n) for n in tracker.maxed_out_tools()}
                keys = {n: k for n in fired if (k := tracker.limit_key(n)) not in (None, n)}
                return TurnStatus.INTERRUPTED, MaxToolFailurePerTurnLimitReached(tracker.limit, errors, fired, keys)
            if turn.repeated is not None:
                return TurnStatus.INTERRUPTED, self._repeat_reason(turn, reply)
            if yields:
                return TurnStatus.COMPLETED, None
            if turn.requests >= self.config.max_requests_per_turn:
                log.info("turn %s reached max_requests_per_turn (%d)", turn_id, self.config.max_requests_per_turn)
                return TurnStatus.INTERRUPTED, MaxRequestPerTurnLimitReached(self.config.max_requests_per_turn)

    def _compact(self, turn: _Turn, emit: Emit) -> None:
        """Forge's compaction before a request, when a [compact] threshold is reached: what the model
        is sent shrinks; the history (and the state database) keeps every message."""
        config = self.config.compact
        window = self.context_window()
        if window and config.token_threshold:
            # The tools are sent with every request but are not among the messages the compactor counts.
            limit = window_threshold(window, self._tools_tokens())
            if limit < config.token_threshold:
                config = replace(config, token_threshold=limit)
        compactor = Compactor(config, self.templates, self.store)
        result = compactor.run(
            turn.request.conversation_id,
            turn.prefix,
            turn.history,
            turn.compactions,
            wire=turn.wire,
            context=self.workspace_context,
        )
        if result is None:
            return
        turn.compactions = result.compactions
        turn.wire = result.wire
        emit(Compacted(turn.request.turn_id, result.before_tokens, result.after_tokens, result.messages))

    def context_window(self) -> int | None:
        """The model's context window in tokens, when the model port knows it."""
        window = getattr(self.model, "context_window", None)
        try:
            value = window() if callable(window) else None
        except Exception:  # model info is a nicety: no window known
            value = None
        return value if isinstance(value, int) and value > 0 else None

    def _account(self, turn: _Turn, usage: Usage, emit: Emit) -> None:
        """Add a request's usage to the turn's; warn once when the prompt passes 80 % of the window."""
        turn.usage = turn.usage + usage
        emit(UsageReport(turn.request.turn_id, usage, turn.usage))
        window = self.context_window()
        if window and not turn.warned and usage.prompt_tokens > CONTEXT_WARNING_RATIO * window:
            turn.warned = True
            emit(ContextWarning(turn.request.turn_id, usage.prompt_tokens, window))

    async def _request(self, turn: _Turn, emit: Emit) -> AssistantReply:
        turn_id = turn.request.turn_id

        text = _Streamed(lambda piece: emit(AssistantText(turn_id, piece)))
        thought = _Streamed(lambda piece: emit(Reasoning(turn_id, piece)))

        def on_text(piece: str) -> None:
            thought.flush()  # the reasoning's last word comes before the text
            text.add(piece)

        def on_retry(attempt: int, delay_ms: int, exc: ModelError) -> None:
            emit(LlmRetry(turn_id, attempt, delay_ms, str(exc)))

        refresh = getattr(self.tools, "refresh", None)
        if refresh is not None:  # an MCP server said its tools changed: the model gets the new list
            await refresh()

        async def timed() -> AssistantReply:
            text.restart()
            thought.restart()
            started = time.perf_counter()
            try:
                reply = await self.model.complete(turn.wire, self.tools.schemas(), on_text, on_reasoning=thought.add)
                return reply.capped()
            finally:
                thought.flush()
                text.flush()
                turn.model_s += time.perf_counter() - started

        budget = total_budget_s(self.config.retry, float(self.config.request_timeout_secs))
        return await with_retry(timed, self.config.retry, on_retry, self.sleep, budget_s=budget)

    def _tools_tokens(self) -> int:
        """About how many tokens the tool definitions take (chars/4 of their JSON)."""
        chars = sum(len(json.dumps(t, separators=(",", ":"))) for t in self.tools.schemas())
        return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN

    async def _run_tools(self, turn: _Turn, reply: AssistantReply, emit: Emit) -> bool:
        """Run the batch in order, store each result at once, then add retry notices."""
        turn_id = turn.request.turn_id
        done: list[tuple[ToolResult, int, int, str]] = []  # result, store row, history index, cause
        yields = False
        for call in reply.tool_calls:
            kind = tool_catalog.kind_of(call.name)
            emit(ToolCallStarted(turn_id, call.name, call.id, call.arguments_json, describe(call), kind))
            started = time.perf_counter()
            try:
                if reply.cut and call.arguments is None:
                    result, stop = self._cut_call(call), False
                elif self.user_hooks:
                    result, stop = await self.user_hooks.call(call, self.tools.call, emit)
                else:
                    result, stop = await self.tools.call(call)
            except asyncio.CancelledError:
                # The call ends with the turn: every surface is told it did not finish, the history has its
                # result (the model sees why next turn), the summary counts it.
                turn.tool_calls += 1
                self._append(turn, ChatMessage("tool", CANCELLED_RESULT, tool_call_id=call.id, name=call.name))
                emit(ToolCallFinished(turn_id, call.name, call.id, False, CANCELLED_RESULT, None, kind))
                raise
            finally:
                turn.tools_s += time.perf_counter() - started
            yields = yields or stop
            turn.tool_calls += 1
            cause = result.output
            if result.is_error:
                turn.failures += 1
                reflection = self.templates.render(ERROR_REFLECTION, {})
                result = ToolResult(result.call_id, result.name, tool_call_error(result.output, reflection), True, result.path)
            row = self._append(turn, ChatMessage("tool", result.output, tool_call_id=result.call_id, name=result.name))
            emit(ToolCallFinished(turn_id, call.name, call.id, not result.is_error, result.output, result.path, kind))
            done.append((result, row, len(turn.history) - 1, cause))
        tracker = turn.tracker
        tracker.adjust_record(r for r, _, _, _ in done)
        # After this batch the turn may stop (a limit, followup, the request cap): then the notices go
        # into the history but no request carries them now, and the events must say so.
        ends = (
            tracker.limit_reached() or yields or turn.requests >= self.config.max_requests_per_turn or turn.repeated is not None
        )
        for result, row, index, cause in done:
            if not result.is_error:
                continue
            left = tracker.remaining_attempts(result.name)
            limit = tracker.limit_for(result.name)
            notice = self.templates.render(RETRY_MESSAGE, {"attempts_left": left, "allowed_max_attempts": limit})
            message = ChatMessage("tool", with_notice(result.output, notice), tool_call_id=result.call_id, name=result.name)
            self.store.update(row, message)
            turn.history[index] = message
            turn.wire[index - len(turn.history)] = message.to_dict()
            emit(Retry(turn_id, result.name, result.call_id, left, limit, notice, cause, result.path, ends))
        return yields

    def _repeated(self, turn: _Turn, reply: AssistantReply) -> tuple[int, int] | None:
        """The reply's first call that makes the same call (or pattern of calls) max_repeated_calls_per_turn
        times in a row in this turn: (its index in the reply, the pattern's size), or None."""
        own = turn.signatures[-turn.own_calls :] if turn.own_calls else []
        found = doom_loop.repeated_call(own, len(reply.tool_calls), self.config.max_repeated_calls_per_turn)
        if found is not None:
            call = reply.tool_calls[found[0]]
            log.info(
                "turn %s: %s repeated %d times in a row (max_repeated_calls_per_turn): not run",
                turn.request.turn_id,
                call.name,
                self.config.max_repeated_calls_per_turn,
            )
        return found

    def _repeat_reason(self, turn: _Turn, reply: AssistantReply) -> MaxRepeatedCallsReached:
        assert turn.repeated is not None
        index, size = turn.repeated
        calls = list(reply.tool_calls[: index + 1])
        # The pattern's tools, oldest first: the calls of this reply up to the stopped one, and before them this turn's.
        tools = [name for name, _ in turn.signatures[: len(turn.signatures) - len(reply.tool_calls)]] + [c.name for c in calls]
        pattern = tuple(tools[-size:]) if size > 1 else ()
        return MaxRepeatedCallsReached(self.config.max_repeated_calls_per_turn, calls[-1].name, pattern)

    def _not_run(self, turn: _Turn, reply: AssistantReply, emit: Emit) -> None:
        """The calls the hard stop kept from running: each gets its result in the history (a conversation that
        goes on, Continue, needs one per call) and its start and failed end on every surface."""
        assert turn.repeated is not None
        index, size = turn.repeated
        reason = self._repeat_reason(turn, reply)
        what = f"the same sequence of calls ({', '.join(reason.pattern)})" if size > 1 else f"the same {reason.tool} call"
        turn_id = turn.request.turn_id
        reflection = self.templates.render(ERROR_REFLECTION, {})
        for i, call in enumerate(reply.tool_calls[index:]):
            cause = NOT_RUN_REPEATED.format(what=what, limit=reason.limit) if i == 0 else NOT_RUN_AFTER
            output = tool_call_error(cause, reflection)
            kind = tool_catalog.kind_of(call.name)
            emit(ToolCallStarted(turn_id, call.name, call.id, call.arguments_json, describe(call), kind))
            turn.tool_calls += 1
            self._append(turn, ChatMessage("tool", output, tool_call_id=call.id, name=call.name))
            emit(ToolCallFinished(turn_id, call.name, call.id, False, output, None, kind))

    def _remind(self, turn: _Turn, hook: TurnHook, reminder: str | None, emit: Emit) -> None:
        """A hook's reminder, as the model reads it (a user message in <system_reminder>) and as the user sees
        it (a reminder event: the CLI's output, the transcript, forge/event)."""
        if reminder:
            self._append(turn, ChatMessage("user", f"<system_reminder>{reminder}</system_reminder>"))
            emit(Reminder(turn.request.turn_id, hook.kind, reminder))
