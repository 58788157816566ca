"""The turn of one workspace: at most one runs at a time (its task, its transcript, the call it is in), and
what may not happen meanwhile (undo, compaction)."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from forge_lsp.core import prompts
from forge_lsp.core.edit_review import ReviewedFiles
from forge_lsp.core.editor_check import EditChecks
from forge_lsp.core.errors import NoModel, TurnInProgress, check_prompt
from forge_lsp.core.orchestrator import Emit, Orchestrator, TurnRequest
from forge_lsp.core.running import RunningCall
from forge_lsp.core.session import Session, asking
from forge_lsp.core.tool_port import BoundTools
from forge_lsp.core.transcript import TranscriptWriter, append_note
from forge_lsp.core.turn_undo import TurnChanges, UndoRefused, UnknownTurn, describe, undo_turn
from forge_lsp.core.user_hooks import UserHooks
from forge_lsp.domain.agents import Agent
from forge_lsp.domain.events import Event, Interrupt, Retry, TranscriptPlace, TurnFinished, TurnSummary
from forge_lsp.domain.messages import Usage
from forge_lsp.llm.litellm_adapter import LiteLLMModel
from forge_lsp.state.turn_files import TurnFiles
from forge_lsp.tools.base import CommandMark, ToolContext, ToolFailure, read_regular
from forge_lsp.trust import refusal

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

log = logging.getLogger(__name__)

UNDO_HINT = "To put them back as they were: Forge: Undo Last Turn, :ForgeUndoTurn {turn} or `forge-lsp undo --turn {turn}`."
"""The end of a transcript's "Files changed" section."""

MAX_INSTRUCTIONS_CHARS = 20_000
MAX_INSTRUCTIONS_BYTES = 10 * 1024 * 1024
"""A larger AGENTS.md is not read at all (its first MAX_INSTRUCTIONS_CHARS are used otherwise)."""


def placed(event: Event, transcript: TranscriptWriter) -> Event:
    """A retry or an interrupt with the place the transcript tells of it (the frontends' diagnostics point there)."""
    if isinstance(event, Retry):
        return replace(event, transcript=TranscriptPlace(str(transcript.path), transcript.call_lines.get(event.call_id, 0)))
    if isinstance(event, Interrupt):
        line = transcript.interrupt_line if transcript.interrupt_line is not None else 0
        return replace(event, transcript=TranscriptPlace(str(transcript.path), line))
    return event


class Turns:
    """The workspace's turns, one at a time: the running one's task, id, transcript and call, the last one's
    usage and failure counts, and the undo of a past one (no turn starts meanwhile)."""

    def __init__(self, runtime: WorkspaceRuntime) -> None:
        self.runtime = runtime
        self._undoing: str | None = None
        """The turn forge.undoTurn is putting back (no turn starts meanwhile)."""
        self._task: asyncio.Task[TurnSummary] | None = None
        self.running_call = RunningCall()
        """The tool call the running turn is in, for what forge.cancel says it stopped."""
        self.turn_id: str | None = None
        self.transcript: TranscriptWriter | None = None
        self.last_errors: dict[str, int] = {}
        self.last_usage: Usage | None = None
        """The last turn's tokens and cost (forge.status usage.lastTurn)."""

    @property
    def running(self) -> bool:
        """True while a turn runs."""
        return self._task is not None and not self._task.done()

    def cancel(self, turn_id: str | None = None) -> bool:
        """Cancel the running turn (if it is turn_id, when given); True if one was cancelled."""
        if not self.running or (turn_id and turn_id != self.turn_id):
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    async def turn_ended(self, timeout: float) -> None:
        """Wait until the running turn has ended (at most timeout seconds; at once when none runs)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task], timeout=timeout)

    def usage(self) -> dict[str, Any]:
        """forge.status usage: {lastTurn?, conversation} (tokens and cost of the current conversation's turns)."""
        runtime = self.runtime
        out: dict[str, Any] = {}
        if self.last_usage is not None:
            out["lastTurn"] = self.last_usage.to_dict()
        try:
            # No state yet: nothing used, and reading would make .forge/ (forge.status in a plain repository).
            usage = runtime.store.conversation_usage(runtime.store.current_conversation()) if runtime.has_state() else Usage()
            out["conversation"] = usage.to_dict()
        except Exception as exc:  # a state problem is reported elsewhere; status still answers
            log.warning("usage: %s", exc)
        return out

    def no_model_message(self) -> str:
        """Where to set a model, for a turn asked for with none set anywhere."""
        runtime = self.runtime
        elsewhere = f"your user config {runtime.loader.user_path}"
        if runtime.wording.model_setting:
            elsewhere += f" or {runtime.wording.model_setting}"
        ignored = [p for p in runtime.effective.ignored if p.key == "model"]
        if ignored:
            refused = refusal(runtime.root)
            fix = (
                f"it cannot be trusted as it is ({refused})"
                if refused is not None
                else f"trust it ({runtime.wording.trust.replace('DIR', str(runtime.root))})"
            )
            return (
                f"no model is set: this workspace's model in {runtime.loader.workspace_path} is ignored because the "
                f"workspace is not trusted; {fix}, or set a model in {elsewhere}"
            )
        if not runtime.loader.workspace_parses():
            return (
                f"no model is set: {runtime.loader.workspace_path} does not parse, so nothing in it applies (its error "
                f"says where); fix it, or set a model in {elsewhere}"
            )
        return (
            f'no model is set: add model = "provider/name" (e.g. "openai/gpt-4o" or "ollama/qwen3") to '
            f"{runtime.loader.workspace_path} or to {elsewhere}"
        )

    def instructions(self) -> str:
        """The workspace's AGENTS.md (or .forge/AGENTS.md), at most MAX_INSTRUCTIONS_CHARS (blocking: run it in a thread).

        Only a regular file inside the workspace: a link to a file elsewhere (~/.ssh/id_rsa)
        would send it to the model, and a FIFO would hang the turn.
        """
        root = self.runtime.root
        for name in ("AGENTS.md", ".forge/AGENTS.md"):
            path = root / name
            if not os.path.lexists(path):
                continue
            try:
                if not path.resolve().is_relative_to(root):
                    raise ToolFailure(f"it points outside the workspace ({path.resolve()})")
                return read_regular(path, name, MAX_INSTRUCTIONS_BYTES)[:MAX_INSTRUCTIONS_CHARS]
            except (ToolFailure, OSError) as exc:
                self.runtime.on_notice(f"forge-lsp: {name} is not used: {exc}")
        return ""

    async def run(
        self,
        prompt: str,
        emit: Emit,
        model: str | None = None,
        turn_id: str | None = None,
        *,
        session: Session | None = None,
        context: Mapping[str, Any] | None = None,
        agent: str | None = None,
    ) -> TurnSummary:
        """Run one turn of a session (the workspace's own when None) to its end, with agent (by id) or the
        session's conversation's agent; context: what the prompt carries from the editor ({file?, range?,
        unsaved?}, shown in the transcript and turnStarted).

        TurnInProgress if one runs in the workspace; BadPrompt (a ValueError) for a bad prompt; NoModel; UnknownAgent."""
        runtime = self.runtime
        if self.running:
            raise TurnInProgress(f"a turn is already running in this workspace ({self.turn_id}); cancel it first")
        if self._undoing is not None:
            raise TurnInProgress(f"turn {self._undoing} is being undone in this workspace; run again when it is done")
        check_prompt(prompt)
        runtime.refresh_trust()
        session = session or runtime.session
        chosen = runtime.agent(agent) if agent is not None else runtime.agent_of(session)
        model = model or chosen.model or runtime.config.model
        if not model:
            raise NoModel(self.no_model_message())
        turn_id = turn_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:8]
        # Another process (a second editor, the CLI) may run a turn on the same conversation.
        holder = runtime.store.turn_lock.acquire(turn_id)
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); wait for it to end or cancel it")
        try:
            return await self._run_locked(prompt, emit, model, turn_id, session, chosen, context)
        finally:
            runtime.store.turn_lock.release()

    async def _run_locked(
        self,
        prompt: str,
        emit: Emit,
        model: str,
        turn_id: str,
        session: Session,
        agent: Agent,
        context: Mapping[str, Any] | None = None,
    ) -> TurnSummary:
        runtime = self.runtime
        store = runtime.store
        config = runtime.turn_config(agent)
        ctx = ToolContext(
            runtime.workspace,
            config,
            session.files,
            runtime.snapshots,
            session.todos,
            watch=store.watch_process,
            notice=lambda message: runtime.on_notice(message),
        )
        turn_files = TurnFiles(store)
        turn_files.prune()
        ctx.changes = TurnChanges(turn_files, runtime.workspace, turn_id)
        servers = [runtime.mcp, *([session.mcp] if session.mcp is not None else [])]
        tools = BoundTools(runtime.registry, ctx, servers, agent=agent)
        checks = (
            EditChecks(runtime.diagnostics, config.verify, runtime.workspace, turn_id)
            if runtime.diagnostics is not None
            else None
        )
        tools.checks = checks
        await tools.prepare()
        llm = LiteLLMModel(config, runtime.root, model)
        llm.reasoning = agent.reasoning
        conversation = runtime.conversation_of(session)
        instructions = await asyncio.to_thread(self.instructions)
        variables = prompts.prompt_context(runtime.root, tools.names(), instructions)
        system_prompt = prompts.system_prompt(runtime.templates, variables, agent)
        hooks = UserHooks(
            config.hooks,
            root=runtime.root,
            turn_id=turn_id,
            conversation_id=conversation,
            max_stop_blocks=config.hook_settings.max_stop_blocks,
            watch=store.watch_process,
            follower=_ContextFollower(ctx),
            running=self.running_call.hook_running,
        )
        orchestrator = Orchestrator(
            config,
            llm,
            tools,
            runtime.templates,
            store,
            sleep=runtime.sleep,
            system_prompt=system_prompt,
            workspace_context=prompts.workspace_context(runtime.templates, variables, system_prompt),
            files_changed=lambda turn: len(turn_files.files(turn)),
            user_hooks=hooks,
            problems_left=checks.left if checks is not None else None,
        )
        transcript = TranscriptWriter(runtime.root, turn_id)
        self.transcript = transcript
        hooks.transcript_path = transcript.path  # (in the user's state folder where .forge/ cannot be used)
        self.turn_id = turn_id
        store.start_turn(turn_id, conversation, prompt)

        def fan_out(event: Event) -> None:
            self.running_call.see(event)
            try:
                if isinstance(event, TurnFinished) and (touched := turn_files.files(turn_id)):
                    transcript.note(f"## Files changed\n\n{describe(touched)}\n{UNDO_HINT.format(turn=turn_id)}\n")
                transcript.handle(event)
            except (OSError, sqlite3.Error) as exc:
                log.warning("transcript %s: %s", transcript.path, exc)
            emit(placed(event, transcript))

        # A confirm rule's question and an edit's review go to the frontend in the same stream, after the call
        # they are about.
        ask = asking(fan_out, turn_id)
        ctx.confirm = lambda tool, question: session.confirm(tool, question, ctx.call_id, ask)
        ctx.files = self.reviewed(session, fan_out, turn_id, lambda: ctx.call_id)
        if checks is not None:
            checks.emit = fan_out
        request = TurnRequest(turn_id, conversation, prompt, model, context=dict(context or {}), agent=agent.id)
        self._task = asyncio.ensure_future(orchestrator.run(request, fan_out))
        try:
            summary = await asyncio.shield(self._task)
        except asyncio.CancelledError:
            # The caller went away ($/cancelRequest): the turn is cancelled with it.
            self._task.cancel()
            summary = await self._task
        finally:
            transcript.close()
        store.finish_turn(turn_id, summary.status.value, summary.to_dict())
        self.last_usage = summary.usage
        self.last_errors = dict(summary.reason.errors) if summary.reason is not None and hasattr(summary.reason, "errors") else {}
        return summary

    def reviewed(
        self, session: Session, emit: Emit, turn_id: str, call_id: Callable[[], str | None] = lambda: None
    ) -> ReviewedFiles:
        """The session's files, each change reviewed in emit's stream when edit_review is "confirm"."""
        runtime = self.runtime
        return ReviewedFiles(
            session.files,
            session,
            emit,
            turn_id,
            lambda: runtime.config.edit_review,
            runtime.root,
            lambda: runtime.config.max_file_size_bytes,
            call_id,
        )

    async def undo_turn(
        self, turn_id: str | None = None, session: Session | None = None, emit: Emit | None = None
    ) -> dict[str, Any]:
        """forge.undoTurn: put back every file turn_id (default: the workspace's last turn that changed files)
        changed, through the session's files (the editor's buffers). {turnId, files: [{path, action}]}. emit:
        where its edits are reviewed when edit_review is "confirm" (None: the user's own command, unreviewed).

        TurnInProgress while a turn runs (here or in another process); UndoRefused (nothing restored) when
        it was undone already or a file changed since; KeyError for an unknown turn."""
        runtime = self.runtime
        if self.running:
            raise TurnInProgress(f"a turn is running in this workspace ({self.turn_id}); undo after it ends")
        store = runtime.store
        table = TurnFiles(store)
        turn_id = turn_id or table.last_turn()
        if turn_id is None:
            raise UndoRefused("no turn in this workspace has changed files yet: nothing to undo")
        holder = store.turn_lock.acquire(f"(undoing turn {turn_id})")
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); undo after it ends")
        self._undoing = turn_id
        try:
            known = store.turn_status(turn_id) is not None
            try:
                session = session or runtime.session
                files = session.files if emit is None else self.reviewed(session, emit, turn_id)
                restored = await undo_turn(table, runtime.workspace, files, turn_id, known)
            except UnknownTurn:
                raise KeyError(turn_id) from None
            table.mark_undone(turn_id)
        finally:
            self._undoing = None
            store.turn_lock.release()
        words = ", ".join(f"{f['action']} {f['path']}" for f in restored) or "every file was already as before the turn"
        append_note(runtime.root, turn_id, f"## Undone\n\n{time.strftime('%Y-%m-%d %H:%M:%S')}: {words}\n")
        log.info("undid turn %s: %s", turn_id, words)
        return {"turnId": turn_id, "files": restored}

    def compact(self) -> dict[str, Any]:
        """forge.compact: summarize the current conversation now, keeping retention_window messages.

        {beforeTokens, afterTokens, messages} (estimated tokens of the conversation's messages; messages:
        how many the summary replaced, 0 when nothing could be). The stored messages all stay.
        """
        if self.running:
            raise TurnInProgress("a turn is running; compact after it ends")
        from forge_lsp.core.compaction import Compactor, build_wire
        from forge_lsp.domain.tokens import estimate_tokens

        store = self.runtime.store
        cid = store.current_conversation()
        history = store.history(cid)
        compactions = store.compactions(cid)
        result = Compactor(self.runtime.config.compact, self.runtime.templates, store).run(
            cid, [], history, compactions, force=True
        )
        if result is None:
            tokens = estimate_tokens(build_wire([], history, compactions))
            return {"beforeTokens": tokens, "afterTokens": tokens, "messages": 0}
        return result.to_dict()

    def close(self) -> None:
        """Cancel a running turn."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


class _ContextFollower:
    """A hook may change files, as a shell command may: the editor's open documents and the turn's undo record
    follow the disk after it (ToolContext.command_started/command_ended), and their notes go to the model."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    async def started(self) -> object:
        return await self.ctx.command_started()

    async def ended(self, mark: object, what: str) -> list[str]:
        assert isinstance(mark, CommandMark)
        before = len(self.ctx.notes)
        await self.ctx.command_ended(mark, what)
        notes = self.ctx.notes[before:]
        del self.ctx.notes[before:]
        return notes
