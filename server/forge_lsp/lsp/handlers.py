"""The LSP features and forge.* commands: each handler a function taking the server and its typed params.

They translate: params in, a runtime call, LSP out; create_server (server.py) registers them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from forge_lsp import __version__
from forge_lsp.core import wording
from forge_lsp.core.errors import BadPrompt, EmptyPrompt, NoModel, TurnInProgress, UnknownAgent, check_prompt
from forge_lsp.core.pipeline import PromptRequest, TurnRunning
from forge_lsp.domain.config import WORKSPACE_FILE
from forge_lsp.domain.events import Compacted
from forge_lsp.lsp import code_actions, mcp_report, turns
from forge_lsp.lsp.config_report import (
    client_trust,
    pull_configuration,
    reload_files,
    reload_trust,
    reload_user_files,
    set_editor_settings,
    trust,
    unwrap_settings,
    watch_files,
)
from forge_lsp.lsp.file_poll import FilePoll
from forge_lsp.lsp.folders import runtime_for
from forge_lsp.lsp.language_server import ForgeLanguageServer, uri_to_path
from forge_lsp.lsp.parent_watch import watch_parent
from forge_lsp.lsp.protocol import request_id
from forge_lsp.lsp.selection import attached, editor_context
from forge_lsp.lsp.user_saves import disk_text
from forge_lsp.redact import redact_data

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime


class TurnRefused(JsonRpcException):
    """forge.run that cannot start: a turn runs in the same workspace, or no model is set (LSP RequestFailed)."""

    CODE = -32803


def object_argument(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    """The one object argument every forge.* command takes (none means {})."""
    if not args:
        return {}
    if len(args) != 1 or not isinstance(args[0], dict):
        raise JsonRpcInvalidParams(f"{command} takes one object argument, got {len(args)} argument(s)")
    return args[0]


def initialize(ls: ForgeLanguageServer, params: t.InitializeParams) -> None:
    """initialize: the editor's settings and its word on trust, from initializationOptions."""
    ls.init_settings = unwrap_settings(params.initialization_options)
    ls.editor_trust = client_trust(params.initialization_options, params.client_info.name if params.client_info else None)
    ls.wording = wording.for_client(params.client_info.name if params.client_info else None, params.initialization_options)
    ls.editor_settings = dict(ls.init_settings)
    if getattr(ls, "_server", None) is None:  # stdio: the editor started this process (TCP: it may be elsewhere)
        watch_parent(params.process_id)


async def initialized(ls: ForgeLanguageServer, params: t.InitializedParams) -> None:
    """initialized: pull the settings, watch the config files, open each folder's runtime, warm up later."""
    from forge_lsp.llm.litellm_adapter import warm_up_delay

    ls.log(f"forge-lsp {__version__} ready")
    try:
        await pull_configuration(ls)
    finally:
        ls.configured.set()
    watched = await watch_files(ls)
    try:
        roots = ls.roots()
    except JsonRpcException as exc:  # a folder forge-lsp cannot open (not file://): each request says so too
        ls.log(f"cannot open the workspace: {exc}", t.MessageType.Error)
        roots = []
    for root in roots:
        try:
            runtime_for(ls, root.as_uri())
        except Exception as exc:
            ls.log(f"cannot open workspace {root}: {exc}", t.MessageType.Error)
    # The user's config files and the trust store always (no editor watches them), the workspaces' where the
    # editor does not.
    poll = FilePoll(ls, not watched, did_change_watched_files, reload_user_files, reload_trust)
    poll.round()
    ls.spawn(poll.run())
    # Templates compile in the background so the first turn does not wait for pybars3; then litellm (seconds
    # of CPU) is imported in a background thread, so a first forge.run sent at once finds both under way. One
    # after the other: two threads allocating at once leave ~17 MB more resident (malloc arenas). A turn that
    # comes first waits for them (litellm is never imported twice). forge.status says modelLibraryLoaded.
    loop = asyncio.get_running_loop()
    preloads = [loop.run_in_executor(None, runtime.preload_templates) for runtime in ls.workspaces]
    delay = warm_up_delay()
    if delay is not None:
        ls.spawn(warm_up_after(preloads, delay))


async def warm_up_after(preloads: list[asyncio.Future[None]], delay: float) -> None:
    """Start litellm's import once the templates are compiled (and delay seconds have passed)."""
    from forge_lsp.llm.litellm_adapter import warm_up

    await asyncio.gather(*preloads, return_exceptions=True)
    await asyncio.sleep(delay)
    warm_up()


async def shutdown(ls: ForgeLanguageServer, params: None) -> None:
    """shutdown: cancel running turns, close every workspace's state, stop its MCP servers."""
    runtimes = list(ls.workspaces)
    ls.shutdown_runtimes()
    await asyncio.gather(*(runtime.close_mcp(final=True) for runtime in runtimes), return_exceptions=True)


def did_change_workspace_folders(ls: ForgeLanguageServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
    """A workspace folder removed: its MCP servers stop (a turn there later starts them again)."""
    for folder in params.event.removed or []:
        try:
            runtime = ls.workspaces.find(uri_to_path(folder.uri))
        except JsonRpcException:
            continue
        if runtime is not None:
            ls.spawn(runtime.close_mcp())


async def did_change_configuration(ls: ForgeLanguageServer, params: t.DidChangeConfigurationParams) -> None:
    """New settings: the section forge when the client pushes it, else pulled again."""
    settings = params.settings.get("forge") if isinstance(params.settings, dict) else None
    if isinstance(settings, dict):
        set_editor_settings(ls, settings)
    else:
        await pull_configuration(ls)


SAVE_WAIT_SECS = 1.0
"""How long a watched change that is an open buffer being saved waits for the editor's didSave."""


def did_change_watched_files(ls: ForgeLanguageServer, params: t.DidChangeWatchedFilesParams) -> None:
    """.forge.toml or a template changed on disk: read them again.

    When every change is an open buffer the user is saving (the disk holds its text), its didSave
    decides about trust first (a watcher may be faster than didSave): the reload waits a moment."""
    if params.changes and all(being_saved(ls, change.uri) for change in params.changes):
        asyncio.get_running_loop().call_later(SAVE_WAIT_SECS, reload_files, ls)
        return
    reload_files(ls)


def being_saved(ls: ForgeLanguageServer, uri: str) -> bool:
    """uri is a trust-relevant file open in the editor, the user's text, and the disk holds it now."""
    doc = ls.workspace.text_documents.get(uri)
    found = trust_document(ls, uri)
    return (
        found is not None and doc is not None and ls.user_saves.is_users(uri, doc.version) and disk_text(found[2]) == doc.source
    )


def trust_document(ls: ForgeLanguageServer, uri: str) -> tuple[WorkspaceRuntime, str, Path] | None:
    """The runtime, relative path and path of an open workspace's trust-relevant file uri (else None)."""
    try:
        path = uri_to_path(uri)
    except JsonRpcException:
        return None
    for runtime in ls.workspaces:
        rel = runtime.is_trust_file(path)
        if rel is not None:
            return runtime, rel, path
    return None


def buffer_changed(ls: ForgeLanguageServer, uri: str, opened: bool = False) -> None:
    """A trust-relevant document opened or changed: note where its text came from (lsp/user_saves.py)."""
    found = trust_document(ls, uri)
    doc = ls.workspace.text_documents.get(uri)
    if found is not None and doc is not None:
        ls.user_saves.buffer_changed(found[0], found[1], uri, found[2], doc.source, opened, doc.version)


def did_open(ls: ForgeLanguageServer, params: t.DidOpenTextDocumentParams) -> None:
    buffer_changed(ls, params.text_document.uri, opened=True)
    ls.document_changes.changed(params.text_document.uri)


def did_change(ls: ForgeLanguageServer, params: t.DidChangeTextDocumentParams) -> None:
    buffer_changed(ls, params.text_document.uri)
    ls.document_changes.changed(params.text_document.uri)


def did_close(ls: ForgeLanguageServer, params: t.DidCloseTextDocumentParams) -> None:
    ls.user_saves.closed(params.text_document.uri)
    ls.document_changes.changed(params.text_document.uri)


FLUSH = "$/forge/flush"
"""Sent by the Neovim plugin (0.7-0.9) after it applied an edit: Neovim sends a buffer's pending didChange
before any other notification of the client, so the server has the edit at once, not 150 ms later."""


def flushed(ls: ForgeLanguageServer, params: Any) -> None:
    """$/forge/flush: nothing to do (the didChange it pushed out came before it)."""


def did_save(ls: ForgeLanguageServer, params: t.DidSaveTextDocumentParams) -> None:
    """A saved .forge.toml, template or script: read them again; the user's own save keeps the trust."""
    # Clients without file watchers (Neovim 0.7) still reload on save.
    uri = params.text_document.uri
    found = trust_document(ls, uri)
    doc = ls.workspace.text_documents.get(uri)
    if found is not None and doc is not None and ls.user_saves.is_users(uri, doc.version):
        runtime, rel, path = found
        if runtime.keep_trust_after_save(rel, doc.source):
            ls.user_saves.buffer_changed(runtime, rel, uri, path, doc.source, version=doc.version)
    # An agent's or a command's file: the workspace's .forge/agents/ and .forge/commands/, or the user's
    # ~/.config/forge-lsp/agents/ and commands/.
    definition = ("/agents/" in uri or "/commands/" in uri) and uri.endswith(".md")
    if found is not None or uri.endswith(("/" + WORKSPACE_FILE, "/.mcp.json")) or "/.forge/templates/" in uri or definition:
        reload_files(ls)


def progress_cancel(ls: ForgeLanguageServer, params: t.WorkDoneProgressCancelParams) -> None:
    """The user cancelled a turn's progress: cancel the turn."""
    ls.cancel_progress(params.token)


def code_action(ls: ForgeLanguageServer, params: t.CodeActionParams) -> list[t.CodeAction]:
    """Fix on any diagnostic, Explain and Edit on a selection: a cheap list (lsp/code_actions.py)."""
    try:
        roots = ls.roots()
    except JsonRpcException:
        return []
    return code_actions.code_actions(params, roots)


async def code_action_resolve(ls: ForgeLanguageServer, action: t.CodeAction) -> t.CodeAction:
    """A Forge action's command (forge.run with its prompt, or the client's forge.editSelection)."""
    return await code_actions.resolve(ls, action)


async def forge_run(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{prompt, model?, agent?, uri?, range?}: run a turn (with that agent, else the conversation's; a prompt
    "/name args" runs a command); its summary when it ends."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.run")
    try:
        prompt = check_prompt(arg.get("prompt"))
    except EmptyPrompt:
        raise JsonRpcInvalidParams("forge.run needs {prompt: string} with a non-empty prompt") from None
    except BadPrompt as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    model = arg.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise JsonRpcInvalidParams("forge.run: model must be a non-empty string")
    uri = arg.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams("forge.run: uri must be a string")
    runtime = runtime_for(ls, uri)
    try:
        accepted = runtime.accept(PromptRequest(prompt, model=model, agent=arg.get("agent")))
    except UnknownAgent as exc:
        raise JsonRpcInvalidParams(f"forge.run: {exc}") from None
    except TurnRunning as exc:
        raise TurnRefused(
            f"a Forge turn is already running in {exc.root} ({exc.turn_id}); cancel it with {ls.wording.cancel} first"
        ) from None
    except BadPrompt as exc:  # "/name args": no such command, or its template fails
        raise JsonRpcInvalidParams(str(exc)) from None
    context = await editor_context(ls, runtime, uri, arg.get("range"))
    try:
        summary = await turns.run_turn(ls, runtime, accepted.attach(attached(context), context.summary()), request_id.get())
    except (TurnInProgress, NoModel) as exc:
        raise TurnRefused(str(exc)) from None
    except BadPrompt as exc:  # the prompt with the selection added
        raise JsonRpcInvalidParams(str(exc)) from None
    return redact_data(summary.to_dict())  # type: ignore[no-any-return]


CANCEL_WAIT_S = 5.0
"""How long forge.cancel waits for the turn to end before it answers (a killed command ends in milliseconds)."""


async def forge_cancel(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{turnId?}: cancel the running turn (that one, when given); {cancelled, turnId?, stopped?}, answered once the
    turn has ended (its turnFinished sent), stopped saying what the cancel stopped ("the running shell command was
    killed (pytest -q)", "the model's reply was stopped")."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.cancel")
    turn_id = arg.get("turnId")
    if turn_id is not None and not isinstance(turn_id, str):
        raise JsonRpcInvalidParams("forge.cancel: turnId must be a string")
    runtime = ls.workspaces.running(turn_id)
    if runtime is None:
        return {"cancelled": False}
    cancelled, stopped = runtime.turn_id, runtime.running_call.stopped()
    runtime.cancel(turn_id)
    await runtime.turn_ended(CANCEL_WAIT_S)
    return redact_data({"cancelled": True, "turnId": cancelled, "stopped": stopped})  # type: ignore[no-any-return]


async def forge_status(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """The workspace's status, and whether the model library is loaded yet."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.status")
    from forge_lsp.llm.litellm_adapter import library_loaded

    return {**runtime_for(ls, arg.get("uri")).status(), "modelLibraryLoaded": library_loaded()}


async def forge_new_conversation(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """Start a new conversation; refused while a turn runs."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.newConversation")
    try:
        return {"conversationId": runtime_for(ls, arg.get("uri")).new_conversation()}
    except TurnInProgress as exc:
        raise TurnRefused(str(exc)) from None


async def forge_show_config(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """The effective config: {key: {value, source}}."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.showConfig")
    return runtime_for(ls, arg.get("uri")).effective.show()


async def forge_trust(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """The user trusts this workspace ({revoke: true}: no longer); its config and templates reload."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.trust")
    revoke = arg.get("revoke", False)
    if not isinstance(revoke, bool):
        raise JsonRpcInvalidParams("forge.trust: revoke must be true or false")
    runtime = runtime_for(ls, arg.get("uri"))
    if runtime.running:
        raise TurnRefused(f"a Forge turn is running in {runtime.root}; trust changes wait until it ends")
    try:
        return trust(ls, runtime, not revoke)
    except OSError as exc:
        raise TurnRefused(f"cannot record the trust decision: {exc}") from None


async def forge_compact(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """Summarize the conversation's older messages now (Forge's compaction); the record keeps them."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.compact")
    runtime = runtime_for(ls, arg.get("uri"))
    try:
        result = runtime.compact()
    except TurnInProgress as exc:
        raise TurnRefused(str(exc)) from None
    if result["messages"]:
        payload = Compacted("", result["beforeTokens"], result["afterTokens"], result["messages"]).to_dict()
        ls.events(payload)
        turns.log_event(ls, payload)
    return result


async def forge_list_conversations(ls: ForgeLanguageServer, *args: Any) -> list[dict[str, Any]]:
    """[{id, title, turns, lastStatus, tokens, updated}], the latest first."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.listConversations")
    return redact_data(runtime_for(ls, arg.get("uri")).list_conversations())  # type: ignore[no-any-return]


async def on_conversation(
    ls: ForgeLanguageServer, args: tuple[Any, ...], name: str, act: Callable[[WorkspaceRuntime, str], dict[str, Any]]
) -> dict[str, Any]:
    """forge.openConversation / forge.deleteConversation {id}: the runtime's open_conversation or
    delete_conversation; an unknown id is invalid params, a running turn refuses."""
    await ls.wait_configured()
    arg = object_argument(args, name)
    cid = arg.get("id")
    if not isinstance(cid, str) or not cid.strip():
        raise JsonRpcInvalidParams(f"{name} needs {{id: string}}: a conversation id from forge.listConversations")
    runtime = runtime_for(ls, arg.get("uri"))
    try:
        return redact_data(act(runtime, cid))  # type: ignore[no-any-return]
    except KeyError:
        raise JsonRpcInvalidParams(f"{name}: no conversation {cid!r} (see forge.listConversations)") from None
    except TurnInProgress as exc:
        raise TurnRefused(str(exc)) from None


async def forge_open_conversation(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """Make a stored conversation the current one: the next forge.run continues it."""
    return await on_conversation(ls, args, "forge.openConversation", lambda r, cid: r.open_conversation(cid))


async def forge_mcp_servers(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{uri?}: the workspace's MCP servers, each with its state and tools (started now if not yet)."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.mcpServers")
    return await mcp_report.servers(runtime_for(ls, arg.get("uri")))


async def forge_restart_mcp_server(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{name, uri?}: stop and start one MCP server again; its status."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.restartMcpServer")
    return await mcp_report.restart(runtime_for(ls, arg.get("uri")), arg.get("name"))


async def forge_delete_conversation(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """Delete a stored conversation; refused while a turn runs."""
    return await on_conversation(ls, args, "forge.deleteConversation", lambda r, cid: r.delete_conversation(cid))


async def forge_undo_turn(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{turnId?, uri?}: put back every file the turn (default: the workspace's last that changed files)
    changed, open documents through workspace/applyEdit; {turnId, files: [{path, action}]}. Refused,
    restoring nothing, while a turn runs, when already undone, or where a file changed since (named)."""
    from forge_lsp.core.turn_undo import UndoRefused

    await ls.wait_configured()
    arg = object_argument(args, "forge.undoTurn")
    turn_id = arg.get("turnId")
    if turn_id is not None and (not isinstance(turn_id, str) or not turn_id.strip()):
        raise JsonRpcInvalidParams("forge.undoTurn: turnId must be a turn id (see forge.listConversations' turnFiles)")
    runtime = runtime_for(ls, arg.get("uri"))
    try:
        # With edit_review = "confirm" each file goes to the client for review, as the agent's edits do.
        result = await runtime.undo_turn(turn_id, emit=lambda event: turns.undo_event(runtime, event))
    except KeyError:
        raise JsonRpcInvalidParams(f"forge.undoTurn: no turn {turn_id!r} in {runtime.root}") from None
    except (TurnInProgress, UndoRefused) as exc:
        data: dict[str, Any] = {"files": getattr(exc, "files", [])}
        if getattr(exc, "detail", None):
            data["detail"] = redact_data(exc.detail)  # type: ignore[union-attr]
        raise TurnRefused(str(exc), data=data) from None
    return redact_data(result)  # type: ignore[no-any-return]
