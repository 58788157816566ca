"""The user's hooks in a turn: pre_tool and post_tool around each tool call, stop where the turn would end.

Each hook is a program (a [[hooks]] entry of the user's config.toml or a trusted workspace's .forge.toml:
domain/hooks.py) run in the workspace as the user, outside the shell tool's sandbox, its process group killed
when it times out or the turn is cancelled. It reads Claude Code's hook JSON on stdin, and its exit code says
what happens: 0 fine (a post_tool hook's stdout is added to the call's result), 2 refuses (a pre_tool hook
blocks the call, a post_tool hook fails it, a stop hook keeps the turn going, at most [hooks] max_stop_blocks
times), anything else is a hook error told to the user (a hookError event) and changes nothing. What a hook
prints reaches the model and the user redacted and cut. Built once here: the orchestrator calls it, and every
frontend shows its events.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from forge_lsp.domain.events import Event, HookError
from forge_lsp.domain.hooks import (
    BLOCK,
    MAX_MESSAGE_CHARS,
    MAX_NOTE_CHARS,
    POST_TOOL,
    PRE_TOOL,
    STOP,
    Hook,
    anchored,
    cut,
    glob_matches,
    matches_every_tool,
    name_alternatives,
    payload,
)
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.patterns import UnsafePattern, compile_pattern, found
from forge_lsp.redact import redact
from forge_lsp.tools.process import Watch, run_process, unwatched

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]
RunCall = Callable[[ToolCall], Awaitable[tuple[ToolResult, bool]]]

MAX_OUTPUT_BYTES = 256 * 1024
"""Of each of a hook's stdout and stderr, what is kept (the rest is read and dropped: the hook never blocks on a
full pipe)."""
TRANSCRIPTS = Path(".forge") / "transcripts"


class DiskFollower(Protocol):
    """What a turn does around a call that may change any file (core/turn.py gives the tool context's): a hook
    (a formatter) may change files, and the editor's open documents and the turn's undo record must follow."""

    async def started(self) -> object:
        """Before the hook runs: what ended() compares with."""
        ...

    async def ended(self, mark: object, what: str) -> list[str]:
        """After it: the documents it changed follow the disk; the notes for the model."""
        ...


@dataclass(frozen=True)
class Ran:
    """A hook's run: its exit code (None: it timed out or could not start) and its output, redacted."""

    code: int | None
    stdout: str
    stderr: str
    error: str | None = None
    """Why it did not run to an exit code of its own (a timeout, a program that would not start)."""


class UserHooks:
    """The hooks of one turn, and what the turn has seen of them (stop refusals, hooks that failed)."""

    def __init__(
        self,
        hooks: Sequence[Hook],
        *,
        root: Path,
        turn_id: str,
        conversation_id: str,
        max_stop_blocks: int,
        watch: Watch | None = None,
        follower: DiskFollower | None = None,
        env: Mapping[str, str] | None = None,
        running: Callable[[Hook | None], None] | None = None,
    ) -> None:
        self.root = root
        self.turn_id = turn_id
        self.conversation_id = conversation_id
        self.max_stop_blocks = max_stop_blocks
        self.watch = watch
        self.follower = follower
        self.running = running
        """Told which hook runs now (None: none), for what cancelling the turn stops (core/running.py)."""
        self.env = dict(os.environ if env is None else env)
        # Scripts written for Claude Code find the project by this; forge's own name beside it.
        self.env["CLAUDE_PROJECT_DIR"] = self.env["FORGE_PROJECT_DIR"] = str(root)
        self.hooks = list(hooks)
        self.transcript_path = root / TRANSCRIPTS / f"{turn_id}.md"
        """The turn's transcript, for the hooks' transcript_path (the turn sets where its writer put it)."""
        self._regexes: dict[str, Any] = {}
        self.stop_blocks = 0
        """How many times this turn a stop hook refused its end."""
        self._failed: set[Hook] = set()
        """The hooks that failed this turn: the first failure of each is told (first), later ones logged too."""

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def matching(self, event: str, tool: str | None = None) -> list[Hook]:
        """The hooks of event that match the tool, in the order they were set (the user's first)."""
        return [h for h in self.hooks if h.event == event and (tool is None or self._matches(h, tool))]

    def _matches(self, hook: Hook, tool: str) -> bool:
        if not hook.matcher:
            return True
        for pattern in hook.matcher:
            if matches_every_tool(pattern):
                return True
            names = name_alternatives(pattern)
            if names is not None:
                if glob_matches(names, tool):
                    return True
                continue
            regex = self._regexes.get(pattern)
            if regex is None:
                try:
                    regex = self._regexes[pattern] = compile_pattern(anchored(pattern))
                except UnsafePattern as exc:  # checked when the config was read: not expected here
                    log.warning("hook %s: matcher %r: %s", hook.where(), pattern, exc)
                    continue
            if found(regex, tool) is not None:
                return True
        return False

    # -- a tool call ------------------------------------------------------------------------------------

    async def call(self, call: ToolCall, run: RunCall, emit: Emit) -> tuple[ToolResult, bool]:
        """Run a tool call with its pre_tool and post_tool hooks: (its result, whether the turn yields after it)."""
        pre, post = self.matching(PRE_TOOL, call.name), self.matching(POST_TOOL, call.name)
        if not pre and not post:
            return await run(call)
        notes: list[str] = []
        for hook in pre:
            ran = await self._run(hook, self._tool_payload(PRE_TOOL, call), emit, notes, call)
            if ran.code == BLOCK:  # the model is given the hook's stderr as the cause, as Claude Code gives it
                # and whose refusal it is: the user's rule, not a mistake in the call (nor a tool that broke)
                said = _reason(ran, hook, call.name)
                if ran.stderr.strip():  # (a refusal without a word names the hook already)
                    said += "\n" + redact(f"(the pre_tool hook `{hook.label()}` refused this call)")
                return ToolResult(call.id, call.name, _with_notes(said, notes), True), False
        result, stop = await run(call)
        if result.is_error or not post:  # as Claude Code's PostToolUse: after a call that succeeded
            return (replace(result, output=_with_notes(result.output, notes)) if notes else result), stop
        response = {"output": result.output, "success": True}
        if result.path is not None:
            response["filePath"] = result.path
        refusals: list[str] = []
        added: list[str] = []
        for hook in post:
            data = self._tool_payload(POST_TOOL, call, response)
            ran = await self._run(hook, data, emit, notes, call)
            if ran.code == BLOCK:
                refusals.append(
                    f"{_reason(ran, hook, call.name)}\n" + redact(f"(the post_tool hook `{hook.label()}` failed this call)")
                )
            elif ran.code == 0 and ran.stdout.strip():
                added.append(redact(f"post_tool hook `{hook.label()}`: {cut(ran.stdout, MAX_NOTE_CHARS)}"))
        if refusals:
            # The call ran and what it did stays: the model reads why it counts as failed, then what it returned.
            said = "\n".join(refusals) + f"\n(the {call.name} call itself ran; what it did stays. Its output:)\n{result.output}"
            return ToolResult(call.id, call.name, _with_notes(said, notes), True, result.path), stop
        text = "\n\n".join([result.output, *added]) if added else result.output
        return replace(result, output=_with_notes(text, notes)), stop

    def _tool_payload(self, event: str, call: ToolCall, response: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return payload(
            event,
            cwd=str(self.root),
            session_id=self.conversation_id,
            turn_id=self.turn_id,
            transcript_path=str(self.transcript_path),
            tool_name=call.name,
            tool_input=call.arguments or {},
            tool_use_id=call.id,
            tool_response=response,
        )

    # -- the turn's end ---------------------------------------------------------------------------------

    async def stop(self, emit: Emit) -> str | None:
        """The turn would end: the stop hooks' refusal for the model (None: it ends). A refusal past
        max_stop_blocks is told to the user, and the turn ends."""
        hooks = self.matching(STOP)
        if not hooks:
            return None
        refusals: list[tuple[Hook, str]] = []
        notes: list[str] = []
        for hook in hooks:
            data = payload(
                STOP,
                cwd=str(self.root),
                session_id=self.conversation_id,
                turn_id=self.turn_id,
                transcript_path=str(self.transcript_path),
                stop_hook_active=self.stop_blocks > 0,
            )
            ran = await self._run(hook, data, emit, notes)
            if ran.code == BLOCK:
                refusals.append((hook, _reason(ran, hook)))
        if not refusals:
            return None
        if self.stop_blocks >= self.max_stop_blocks:
            for hook, reason in refusals:
                message = (
                    f"refused the end of the turn again ({reason.splitlines()[0][:200]}), but its refusals reached "
                    f"[hooks] max_stop_blocks ({self.max_stop_blocks}) this turn: the turn ends"
                )
                self._tell(hook, message, emit)
            return None
        self.stop_blocks += 1
        said = "\n".join(
            redact(f"The stop hook `{hook.label()}` did not let the turn end: {reason}") for hook, reason in refusals
        )
        return _with_notes(f"{said}\n({self.stop_blocks} of at most {self.max_stop_blocks} such refusals this turn)", notes)

    # -- running one ------------------------------------------------------------------------------------

    async def _run(self, hook: Hook, data: Mapping[str, Any], emit: Emit, notes: list[str], call: ToolCall | None = None) -> Ran:
        """Run one hook with data on stdin; a hook error is told (and its result is "no effect")."""
        stdin = json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogateescape")
        mark = await self._follow_start()
        started = time.perf_counter()
        if self.running is not None:
            self.running(hook)
        try:
            done = await run_process(
                hook.command,
                self.root,
                self.env,
                float(hook.timeout_secs),
                max_bytes=MAX_OUTPUT_BYTES,
                stdin=stdin,
                watch=self.watch or unwatched,
            )
        except OSError as exc:
            ran = Ran(None, "", "", f"could not start: {exc.strerror or exc}")
        else:
            if done.timed_out:
                error = f"timed out after {hook.timeout_secs} s (timeout_secs): it was killed with its process group"
                ran = Ran(None, redact(done.stdout), redact(done.stderr), error)
            else:
                ran = Ran(done.exit_code, redact(done.stdout), redact(done.stderr))
        finally:
            if self.running is not None:
                self.running(None)
        notes.extend(n for n in await self._follow_end(mark, hook) if n not in notes)
        log.info(
            "%s hook `%s` (%s)%s: %s in %.0f ms",
            hook.event,
            hook.label(),
            hook.where(),
            f" for {call.name}" if call is not None else "",
            ran.error or f"exit {ran.code}",
            (time.perf_counter() - started) * 1000,
        )
        if ran.error is not None or ran.code not in (0, BLOCK):
            said = ran.error or f"exited {ran.code}" + (f" ({cut(ran.stderr, 300)})" if ran.stderr.strip() else "")
            what = f"the {call.name} call" if call is not None else "the turn's end"
            self._tell(hook, f"{said}: a hook error, which leaves {what} as it would be without the hook", emit, call)
        return ran

    def _tell(self, hook: Hook, message: str, emit: Emit, call: ToolCall | None = None) -> None:
        first = hook not in self._failed
        self._failed.add(hook)
        log.info("%s hook `%s` (%s): %s", hook.event, hook.label(), hook.where(), message)  # the event is the warning
        emit(
            HookError(
                self.turn_id,
                hook=hook.event,
                command=hook.label(),
                source=hook.source,
                file=hook.path,
                line=hook.line,
                tool=call.name if call is not None else None,
                call_id=call.id if call is not None else None,
                message=message,
                first=first,
            )
        )

    async def _follow_start(self) -> object:
        if self.follower is None:
            return None
        try:
            return await self.follower.started()
        except Exception:  # following the disk is the editor's nicety: the hook runs all the same
            log.exception("cannot note the open documents before a hook")
            return None

    async def _follow_end(self, mark: object, hook: Hook) -> list[str]:
        if self.follower is None or mark is None:
            return []
        try:
            return await self.follower.ended(mark, f"{hook.event} hook")
        except Exception:
            log.exception("cannot follow what a hook changed on disk")
            return []


def _reason(ran: Ran, hook: Hook, tool: str | None = None) -> str:
    """A refusing hook's stderr as the model reads it (what Claude Code gives it), or a line saying there was none."""
    text = cut(ran.stderr, MAX_MESSAGE_CHARS)
    what = f"the {tool} call" if tool is not None else "the end of the turn"
    return text or redact(f"the {hook.event} hook `{hook.label()}` refused {what} (exit 2) without saying why on stderr")


def _with_notes(text: str, notes: list[str]) -> str:
    return "\n\n".join([text, *notes]) if notes else text
