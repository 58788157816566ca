"""A turn as the editor sees it: work-done progress, forge/event and log lines, diagnostics, showMessage, Continue."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from forge_lsp.core.errors import TurnInProgress
from forge_lsp.core.pipeline import PromptRequest
from forge_lsp.domain.events import (
    ContextWarning,
    Event,
    HookError,
    Interrupt,
    ModelNotice,
    Retry,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    TurnSummary,
)
from forge_lsp.domain.questions import EditReviewAsked, PermissionAsked
from forge_lsp.lsp import convert
from forge_lsp.lsp.language_server import ForgeLanguageServer
from forge_lsp.lsp.protocol import work_done_token
from forge_lsp.lsp.selection import attached, editor_context
from forge_lsp.render import EventLines, format_hook_error

if TYPE_CHECKING:
    from forge_lsp.core.pipeline import Accepted
    from forge_lsp.core.runtime import WorkspaceRuntime

CONTINUE = "Continue"


async def offer_continue(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, summary: TurnSummary) -> None:
    """After an interrupt: a Continue button that starts a new turn with a fresh tracker."""
    assert summary.reason is not None
    message = f"Forge: {summary.reason.describe()}. Continue anyway?"
    answer = await ls.window_show_message_request_async(
        t.ShowMessageRequestParams(type=t.MessageType.Warning, message=message, actions=[t.MessageActionItem(title=CONTINUE)])
    )
    if answer is None or answer.title != CONTINUE:
        return
    try:
        accepted = runtime.accept(PromptRequest("Continue."))
    except TurnInProgress:  # another turn started meanwhile: that one goes on
        return
    context = await editor_context(ls, runtime, None, None)  # the buffers as they are now
    await run_turn(ls, runtime, accepted.attach(attached(context), context.summary()), None)


async def _progress_token(ls: ForgeLanguageServer) -> str | int | None:
    """The request's work-done token, else one the server creates (None: the client shows no progress)."""
    token = work_done_token.get()
    if token is not None:
        return token
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    import uuid

    token = f"forge-{uuid.uuid4().hex}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
    except Exception as exc:
        ls.log(f"window/workDoneProgress/create failed: {exc}", t.MessageType.Warning)
        return None
    return token


async def run_turn(
    ls: ForgeLanguageServer, runtime: WorkspaceRuntime, accepted: Accepted, msg_id: str | int | None
) -> TurnSummary:
    """Run an accepted prompt's turn, reporting it as progress, diagnostics and notifications."""
    token = await _progress_token(ls)
    if token is not None:
        ls.progress_tokens[token] = runtime.root
        ls.work_done_progress.begin(
            token, t.WorkDoneProgressBegin(title="Forge", message=accepted.prompt.splitlines()[0][:80], cancellable=True)
        )
    if msg_id is not None:
        ls.requests[msg_id] = runtime.root

    def emit(event: Event) -> None:
        on_event(ls, runtime, event, token)

    template_errors = len(runtime.templates.errors)
    try:
        summary = await runtime.prompt(accepted, emit)
    except BaseException:
        # Refused before it started (no model, a turn running): the progress begun must end, or
        # the editor keeps showing the refused prompt as the running turn's.
        if token is not None:
            ls.work_done_progress.end(token, t.WorkDoneProgressEnd(message="refused"))
        raise
    finally:
        if msg_id is not None:
            ls.requests.pop(msg_id, None)
        if token is not None:
            ls.progress_tokens.pop(token, None)
    if token is not None:
        ls.work_done_progress.end(token, t.WorkDoneProgressEnd(message=summary.status.value))
    if summary.timing:
        timing = ", ".join(f"{k} {v:.1f}" for k, v in summary.timing.items())
        ls.log(f"turn {summary.turn_id} timing: {timing}", t.MessageType.Info)
    for error in runtime.templates.errors[template_errors:]:
        # An override that broke at render time: the built-in was used; the user should know.
        ls.log(error, t.MessageType.Warning)
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {error}"))
    if summary.reason is not None:
        ls.spawn(offer_continue(ls, runtime, summary))
    return summary


def review_edit(runtime: WorkspaceRuntime, event: EditReviewAsked) -> None:
    """An edit to review (edit_review = "confirm"): one workspace/applyEdit the client shows for the user's yes."""
    from forge_lsp.core.edit_review import answer_review
    from forge_lsp.lsp.files import EditorFiles

    files = runtime.session.files
    assert isinstance(files, EditorFiles)
    answer_review(event, files.review)


def undo_event(runtime: WorkspaceRuntime, event: Event) -> None:
    """forge.undoTurn's events: its files' reviews (edit_review = "confirm")."""
    if isinstance(event, EditReviewAsked):
        review_edit(runtime, event)


def on_event(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, event: Event, token: str | int | None) -> None:
    """One turn event -> forge/event, logMessage, progress, diagnostics, showMessage; a question to the user ->
    showMessageRequest (Allow / Deny / Allow for this conversation); an edit to review -> workspace/applyEdit."""
    if isinstance(event, PermissionAsked):
        from forge_lsp.core.session import answer  # here: the server answers initialize before the runtime loads

        answer(event, ls.ask_user)
        return
    if isinstance(event, EditReviewAsked):
        review_edit(runtime, event)
        return
    # Tool output and model text may echo a secret (from the environment, or key-shaped): not to the client.
    payload = event.to_dict()  # redacted as it is sent (forge/event, logMessage): ForgeProtocol
    ls.events(payload)
    log_event(ls, payload)
    if isinstance(event, TurnStarted):
        ls.diagnostics.clear(convert.SOURCE)
        ls.file_failures.reset()
    elif isinstance(event, ToolCallStarted | Retry) and token is not None:
        ls.work_done_progress.report(token, t.WorkDoneProgressReport(message=convert.progress_report(event)))
    if isinstance(event, Retry) and event.transcript is not None:
        transcript_uri = Path(event.transcript.path).as_uri()
        ls.diagnostics.add(convert.SOURCE, transcript_uri, convert.retry_diagnostic(event, event.transcript.line))
        file_path = runtime.root / event.path if event.path else None
        # A read of a missing file must not put a Problem on a file that is not there.
        if file_path is not None and file_path.is_file():
            ls.file_failures.retry(event, file_path.as_uri())
    elif isinstance(event, ToolCallFinished):
        # A call that made good an earlier failure on its file takes that failure's Warning off the file.
        ls.file_failures.finished(event, (runtime.root / event.path).as_uri() if event.path else None)
    elif isinstance(event, Interrupt) and event.transcript is not None:
        # The user hears of the interrupt once: offer_continue's showMessageRequest (a Warning with
        # "Continue") carries the reason; a showMessage as well would be a second notification.
        transcript_uri = Path(event.transcript.path).as_uri()
        ls.diagnostics.add(convert.SOURCE, transcript_uri, convert.interrupt_diagnostic(event, event.transcript.line))
        ls.file_failures.interrupt(event)  # and where the failures were
    elif isinstance(event, ContextWarning):
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {event.message()}"))
    elif isinstance(event, ModelNotice) and event.level == "warning":
        # Each is said once per model (a cut reply as it happens): the log has the info ones.
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {event.message}"))
    elif isinstance(event, HookError):
        hook_error(ls, event)
    elif isinstance(event, TurnFinished) and event.summary is not None and event.summary.error:
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Error, message=f"Forge: {event.summary.error}"))


def hook_error(ls: ForgeLanguageServer, event: HookError) -> None:
    """A hook that went wrong: a Warning on its [[hooks]] entry's line (until the next turn), and a message the
    first time in the turn (the user's config.toml is rarely open: its diagnostic alone would go unseen)."""
    if event.file is not None and event.line is not None:
        diagnostic = t.Diagnostic(
            range=convert.line_range(event.line - 1),
            message=f"{event.hook} hook `{event.command}` {event.message}",
            severity=t.DiagnosticSeverity.Warning,
            source=convert.SOURCE,
            code="hook-error",
            data={"turnId": event.turn_id, "tool": event.tool},
        )
        ls.diagnostics.add(convert.SOURCE, Path(event.file).as_uri(), diagnostic)
    if event.first:
        message = f"Forge: {format_hook_error(event.to_dict())}"
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))


def log_event(ls: ForgeLanguageServer, payload: dict[str, Any]) -> None:
    """One window/logMessage per event; streamed text (and reasoning) as one line per complete message."""
    turn_id = str(payload.get("turnId", ""))
    lines = ls.event_lines.setdefault(turn_id, EventLines())
    for line in lines.feed(payload):
        ls.log(line)
    if payload.get("type") == "turnFinished":
        del ls.event_lines[turn_id]
