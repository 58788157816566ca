"""A workspace's config in the editor: its problems as diagnostics, the Trust question, editor settings and file watchers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from forge_lsp.domain.config import WORKSPACE_FILE
from forge_lsp.lsp import convert
from forge_lsp.lsp.language_server import CONFIGURATION_TIMEOUT_SECS, ForgeLanguageServer, uri_to_path
from forge_lsp.trust import EditorTrust, editor_covers, refusal

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

CONFIG_SOURCE = "forge.config"
TEMPLATE_SOURCE = "forge.templates"
TRUST, NOT_NOW = "Trust", "Not now"
# A file with thousands of bad keys must not flood the client: the first ones are enough to fix it.
MAX_REPORTED_PROBLEMS = 200


def unwrap_settings(value: Any) -> dict[str, Any]:
    """Editor settings as a dict: {"settings": {...}} (VS Code's initializationOptions) or the dict itself."""
    if not isinstance(value, dict):
        return {}
    return value["settings"] if isinstance(value.get("settings"), dict) else value


def configuration_entry(result: Any) -> dict[str, Any] | None:
    """The "forge" entry of a workspace/configuration answer; None when the answer has none.

    The spec asks for a list with one entry per item, but clients answer null, [] or
    [null] too.
    """
    entry = result[0] if isinstance(result, list) and result else None
    return entry if isinstance(entry, dict) else None


def client_trust(options: Any, client: str | None = None) -> EditorTrust | None:
    """initializationOptions.workspaceTrusted: the client's word that the user trusts the workspace (VS Code's
    workspace.isTrusted), with workspaceTrustCovers when it covers some files only ({path: sha256 of its content}:
    Neovim's vim.secure hashes .forge.toml alone). None when it says nothing, or not trusted.

    Only initializationOptions carry it: workspace/configuration is settings, which a
    workspace's own .vscode/settings.json may set. The word stands only for what it covers (trust.EditorTrust).
    """
    if not isinstance(options, dict) or options.get("workspaceTrusted") is not True:
        return None
    source = f"{client or 'the editor'}'s own trust"
    if "workspaceTrustCovers" not in options:
        return EditorTrust(source)
    covers = editor_covers(options["workspaceTrustCovers"])
    return EditorTrust(source, covers if covers is not None else {})


def report_config(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> None:
    """Config and template problems as diagnostics on the file (and a log line each, up to a cap).

    In an untrusted workspace each ignored key (or template override) is a Warning at its
    line, and the user is asked once (per change of the files) whether to trust it.
    """
    from forge_lsp.config import UNTRUSTED

    by_file: dict[str, list[t.Diagnostic]] = {}
    problems = runtime.reported_problems()
    tell_file_problems(ls, runtime)
    for problem in problems[:MAX_REPORTED_PROBLEMS]:
        ls.log(f"config: {problem}", t.MessageType.Warning)
        # No file to put it on (editor settings; a FORGE_LSP_CONFIG naming a file that does not exist): a message.
        if problem.path is None or (not problem.key and not problem.path.exists()):
            ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {problem}"))
            continue
        line = (problem.line or 1) - 1
        message = f"{problem.key}: {problem.message}" if problem.key else problem.message
        if problem.code == UNTRUSTED:
            message += f"; trust the workspace to use it ({ls.wording.trust})"
        # A bad key is dropped alone; a file that does not parse says itself what applies instead.
        elif problem.key and not problem.message.endswith("is ignored"):  # (a bad [[hooks]] entry says it itself)
            message += " (this key is ignored; the rest of the file applies)"
        diag = t.Diagnostic(
            range=convert.line_range(line),
            message=message,
            severity=t.DiagnosticSeverity.Warning if problem.code == UNTRUSTED else t.DiagnosticSeverity.Error,
            source=convert.SOURCE,
            code=problem.code,
        )
        by_file.setdefault(problem.path.as_uri(), []).append(diag)
    if len(problems) > MAX_REPORTED_PROBLEMS:
        ls.log(f"config: ... and {len(problems) - MAX_REPORTED_PROBLEMS} more problems", t.MessageType.Warning)
    uris = {runtime.loader.workspace_path.as_uri(), runtime.loader.user_path.as_uri()}
    uris |= ls.config_uris.get(runtime.root, set()) | set(by_file)
    for uri in uris:
        ls.diagnostics.set(CONFIG_SOURCE, uri, by_file.get(uri, []))
    ls.config_uris[runtime.root] = set(by_file)
    for error in runtime.templates.errors:
        ls.log(error, t.MessageType.Warning)
    refused = runtime.client_trust_refused()
    if refused is not None and ls.trust_refused.get(runtime.root) != refused:
        ls.trust_refused[runtime.root] = refused
        # The reason first, the folder last: a notification cut to one line keeps its point.
        said = (
            f"Forge: this workspace cannot be trusted, though the editor trusts it: {refusal(runtime.root) or refused}; "
            f"its .forge.toml / .forge/ settings stay ignored ({runtime.root})"
        )
        ls.log(said, t.MessageType.Warning)
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=said))
    ignored = runtime.ignored_keys()
    if ignored and refused is None:  # (refused: the warning above says why trusting cannot help)
        ls.spawn(offer_trust(ls, runtime, ignored))


def tell_file_problems(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> None:
    """A problem in one of the user's own config files the editor does not have open (config.toml, mcp.json, an
    agent or command file) is also said in one message, once: its diagnostics are on a file outside the workspace
    that nobody looks at (Neovim lists no problems of files not open). Said again only after it was fixed and came
    back. A workspace's files are not: their diagnostics are where the user works, and a cloned repository's
    key names are not put in a notification."""
    found = {
        str(p): p
        for p in runtime.config_problems()
        if p.path is not None
        and not p.path.is_relative_to(runtime.root)
        and p.path.exists()
        and p.path.as_uri() not in ls.workspace.text_documents
    }
    told = ls.problems_told.get(runtime.root, set())
    new = [text for text in found if text not in told]
    ls.problems_told[runtime.root] = set(found)
    if not new:
        return
    # The problem first, the file last: a notification cut to one line (Neovim) keeps its point.
    first = found[new[0]]
    what = f"{first.key}: {first.message}" if first.key else first.message
    where = f"{home_relative(first.path)}:{first.line}" if first.line else home_relative(first.path)
    more = f"; and {len(new) - 1} more, each a diagnostic on its file" if len(new) > 1 else ""
    ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {what} ({where}){more}"))


def home_relative(path: Path | None) -> str:
    """A path as a person writes it: ~/.config/... for a file in the home folder."""
    if path is None:
        return ""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


async def offer_trust(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, keys: list[str]) -> None:
    """One message per change of the workspace's files: what is ignored, and a Trust button."""
    from forge_lsp.trust import fingerprint

    digest = await asyncio.get_running_loop().run_in_executor(None, fingerprint, runtime.root)
    # Trusted meanwhile (:ForgeTrust, forge.trust), or asked already about these files: nothing to ask.
    if runtime.trusted or ls.trust_offered.get(runtime.root) == digest:
        return
    ls.trust_offered[runtime.root] = digest
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    message = (
        f"Forge: {runtime.root.name} is not trusted{runtime.untrusted_since()}, so its .forge.toml / .forge/ / .mcp.json settings that can "
        f"run code or send data elsewhere are ignored ({shown}). Trust this workspace?"
    )
    try:
        answer = await ls.window_show_message_request_async(
            t.ShowMessageRequestParams(
                type=t.MessageType.Warning,
                message=message,
                actions=[t.MessageActionItem(title=TRUST), t.MessageActionItem(title=NOT_NOW)],
            )
        )
    except Exception as exc:  # a client that cannot ask: the diagnostics still say it
        ls.log(f"could not ask whether to trust {runtime.root}: {exc}")
        return
    if answer is not None and answer.title == TRUST and not runtime.trusted:
        try:
            trust(ls, runtime, True)
        except OSError as exc:  # cannot be trusted (a file linked out of the workspace) or not recorded
            ls.log(f"Forge: {exc}", t.MessageType.Error)
            ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Error, message=f"Forge: {exc}"))


def trust(ls: ForgeLanguageServer, runtime: WorkspaceRuntime, trusted: bool) -> dict[str, Any]:
    """Record the user's trust decision for a workspace and apply it at once."""
    runtime.set_trusted(trusted)
    if trusted:
        buffers_trusted(ls, runtime)
    verb = "trusted" if trusted else "no longer trusted"
    ls.log(f"{runtime.root} is {verb}: config and templates reloaded", t.MessageType.Info)
    report_config(ls, runtime)
    return {"root": str(runtime.root), "trusted": runtime.trusted, "trust": runtime.trust_state()}


def buffers_trusted(ls: ForgeLanguageServer, runtime: WorkspaceRuntime) -> None:
    """The user trusted runtime's files as they are: an open document whose buffer came from the disk untrusted
    (lsp/user_saves.py) and holds the text now trusted is the user's again, so their next edit and save keep the
    trust (a .forge.toml opened in an untrusted workspace, :ForgeTrust, an edit, :w)."""
    for uri, doc in list(ls.workspace.text_documents.items()):
        if uri not in ls.user_saves.from_disk:
            continue
        try:
            rel = runtime.is_trust_file(uri_to_path(uri))
        except JsonRpcException:
            continue
        if rel is not None and runtime.is_trusted_text(rel, doc.source):
            ls.user_saves.from_disk.pop(uri, None)


async def pull_configuration(ls: ForgeLanguageServer) -> None:
    """workspace/configuration section "forge", when the client supports it."""
    caps = ls.client_capabilities.workspace
    if caps is None or not caps.configuration:
        return
    ticket = settings_ticket(ls)
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(t.ConfigurationParams(items=[t.ConfigurationItem(section="forge")])),
            CONFIGURATION_TIMEOUT_SECS,
        )
    except TimeoutError:
        ls.log(
            f"workspace/configuration: no answer in {CONFIGURATION_TIMEOUT_SECS:g} s; using no editor settings",
            t.MessageType.Warning,
        )
        return
    except Exception as exc:  # a client that fails this must not stop the server
        ls.log(f"workspace/configuration failed: {exc}", t.MessageType.Warning)
        return
    settings = configuration_entry(result)
    if settings is None:
        # null, [], [null] or a non-object entry: the client has no "forge" settings.
        ls.log(f"workspace/configuration: no settings for section forge in the answer {json.dumps(result)[:200]}")
        settings = {}
    set_editor_settings(ls, settings, ticket)


def settings_ticket(ls: ForgeLanguageServer) -> int:
    """The number of settings news starting now (a pull sent, a push received): later news wins."""
    ls.settings_asked += 1
    return ls.settings_asked


def set_editor_settings(ls: ForgeLanguageServer, settings: Any, ticket: int | None = None) -> None:
    """New editor settings: reload every workspace's config. ticket: their number (settings_ticket); settings
    older than those in force (a pull answered after a push that came meanwhile) are set aside."""
    ticket = settings_ticket(ls) if ticket is None else ticket
    if ticket < ls.settings_applied:
        ls.log("workspace/configuration: the answer is older than settings received since; it is set aside")
        return
    ls.settings_applied = ticket
    # workspace/configuration is the live view; initializationOptions fill what it lacks.
    ls.editor_settings = {**ls.init_settings, **unwrap_settings(settings)}
    settings = ls.editor_settings
    for runtime in ls.workspaces:
        runtime.reload_config(settings, editor=True)
        report_config(ls, runtime)


def reload_user_files(ls: ForgeLanguageServer) -> None:
    """The user's config.toml, mcp.json, agents or commands changed: every workspace reads its config again."""
    for runtime in ls.workspaces:
        runtime.reload_config()
        report_config(ls, runtime)


def reload_trust(ls: ForgeLanguageServer) -> None:
    """The trust store changed: a workspace the user trusted (or no longer trusts) with `forge-lsp trust` in a
    terminal reads its config again; one whose trust stays as it is (the editor's own forge.trust) does not."""
    for runtime in ls.workspaces:
        if runtime.trust_changed():
            runtime.reload_config()
            verb = "trusted" if runtime.trusted else "no longer trusted"
            ls.log(f"{runtime.root} is {verb} (the trust store changed): config and templates reloaded", t.MessageType.Info)
            said = (
                f"Forge: {runtime.root.name} is trusted now (forge-lsp trust): its .forge.toml and .forge/ apply"
                if runtime.trusted
                else f"Forge: {runtime.root.name} is no longer trusted (forge-lsp trust --revoke): its settings that need "
                f"trust are ignored ({ls.wording.trust} trusts it)"
            )
            ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Info, message=said))
            if runtime.trusted:
                buffers_trusted(ls, runtime)
            report_config(ls, runtime)


def reload_files(ls: ForgeLanguageServer) -> None:
    """.forge.toml or a template changed: read them again."""
    for runtime in ls.workspaces:
        runtime.reload_config()
        runtime.reload_templates()
        report_config(ls, runtime)


async def watch_files(ls: ForgeLanguageServer) -> bool:
    """Ask the client to watch .forge.toml and .forge/templates/ (dynamic registration); whether it does."""
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if watched is None or not watched.dynamic_registration:
        return False
    options = t.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            t.FileSystemWatcher(glob_pattern=f"**/{WORKSPACE_FILE}"),
            t.FileSystemWatcher(glob_pattern="**/.mcp.json"),
            t.FileSystemWatcher(glob_pattern="**/.forge/templates/*.md"),
            t.FileSystemWatcher(glob_pattern="**/.forge/agents/*.md"),
            t.FileSystemWatcher(glob_pattern="**/.forge/commands/*.md"),
        ]
    )
    registration = t.Registration(id="forge-config-watch", method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
    try:
        await ls.client_register_capability_async(t.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        ls.log(f"could not register file watchers: {exc}", t.MessageType.Warning)
        return False
    return True
