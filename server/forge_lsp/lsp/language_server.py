"""ForgeLanguageServer: the server's state (runtimes, diagnostics, requests and progress of turns) and its plumbing."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from forge_lsp import __version__
from forge_lsp.domain.config import WORKSPACE_FILE
from forge_lsp.lsp import convert
from forge_lsp.lsp.coalesce import TextCoalescer
from forge_lsp.lsp.diagnostics import DiagnosticStore
from forge_lsp.lsp.protocol import ForgeProtocol
from forge_lsp.redact import redact

if TYPE_CHECKING:
    from forge_lsp.config import ConfigProblem
    from forge_lsp.runtime import WorkspaceRuntime

# The runtime (config, templates, tools, state) is imported on first use, not at start:
# initialize must answer as fast as a bare pygls server.

log = logging.getLogger(__name__)

EVENT_NOTIFICATION = "forge/event"
CONFIG_SOURCE = "forge.config"
CONFIGURATION_TIMEOUT_SECS = 5.0
"""How long initialized waits for the client's workspace/configuration answer."""
TEMPLATE_SOURCE = "forge.templates"
TRUST, NOT_NOW = "Trust", "Not now"
TRUST_HINT = "trust the workspace to use it (Forge: Trust Workspace, :ForgeTrust, or forge-lsp trust DIR)"
ALLOW, DENY, ALWAYS = "Allow", "Deny", "Allow for this conversation"
MAX_SELECTION_CHARS = 20_000
MAX_SELECTED_FILE_BYTES = 10 * 1024 * 1024
# A file with thousands of bad keys must not flood the client: the first ones are enough to fix it.
MAX_REPORTED_PROBLEMS = 200


def uri_to_path(uri: str) -> Path:
    """A file:// URI as a path."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise JsonRpcInvalidParams(f"only file:// URIs are supported, got {uri!r}")
    return Path(unquote(parsed.path))


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


def client_trust(options: Any) -> bool | None:
    """initializationOptions.workspaceTrusted: the client's word on trust (VS Code's workspace.isTrusted).

    Only initializationOptions carry it: workspace/configuration is settings, which a
    workspace's own .vscode/settings.json may set.
    """
    value = options.get("workspaceTrusted") if isinstance(options, dict) else None
    return value if isinstance(value, bool) else None


class ForgeLanguageServer(LanguageServer):
    """Holds one WorkspaceRuntime per workspace folder and the diagnostics of their turns."""

    def __init__(self) -> None:
        super().__init__("forge-lsp", __version__, protocol_cls=ForgeProtocol)
        self.runtimes: dict[Path, WorkspaceRuntime] = {}
        self.diagnostics = DiagnosticStore(self._publish)
        self.editor_settings: Any = None
        self.init_settings: dict[str, Any] = {}
        self.client_trusted: bool | None = None
        """What the client said of trust at initialize (VS Code's workspace.isTrusted); None: nothing."""
        self.config_uris: dict[Path, set[str]] = {}
        """Per workspace, the files that carry its config diagnostics (to clear them on the next report)."""
        self.trust_offered: dict[Path, str] = {}
        """Per workspace, the fingerprint the Trust question was last asked for (asked once per change)."""
        self.background: set[asyncio.Task[Any]] = set()
        self.requests: dict[str | int, Path] = {}
        self.events = TextCoalescer(lambda payload: self.protocol.notify(EVENT_NOTIFICATION, payload))
        """forge/event out, streamed assistantText merged to ~20 a second."""
        self.progress_tokens: dict[str | int, Path] = {}
        # Streamed assistant text (or reasoning) per turn: its event type and pieces, logged as
        # one line when the message is complete.
        self.assistant_text: dict[str, tuple[str, list[str]]] = {}
        self.configured = asyncio.Event()
        assert isinstance(self.protocol, ForgeProtocol)
        self.protocol.on_cancel_request = self.cancel_turn_request

    # -- plumbing -------------------------------------------------------

    def _publish(self, uri: str, diagnostics: list[t.Diagnostic]) -> None:
        for diagnostic in diagnostics:  # a failed call's error text may echo a secret
            diagnostic.message = redact(diagnostic.message)
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a background task, keeping a reference and logging its failure."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)

        def done(task: asyncio.Task[Any]) -> None:
            self.background.discard(task)
            if not task.cancelled() and task.exception() is not None:
                log.error("background task failed", exc_info=task.exception())

        task.add_done_callback(done)
        return task

    def log(self, message: str, kind: t.MessageType = t.MessageType.Log) -> None:
        """window/logMessage, secrets redacted."""
        self.window_log_message(t.LogMessageParams(type=kind, message=redact(message)))

    def show_notice(self, message: str) -> None:
        """A state problem the user should know about (a state file moved aside): logged and shown."""
        self.log(message, t.MessageType.Warning)
        self.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))

    def roots(self) -> list[Path]:
        """The workspace folders (or the root), as paths."""
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_uri:
            folders = [uri_to_path(self.workspace.root_uri)]
        return folders

    def runtime_for(self, uri: str | None = None) -> WorkspaceRuntime:
        """The runtime of the folder holding uri (the first folder when uri is None)."""
        roots = self.roots()
        if not roots:
            raise JsonRpcInvalidParams("the client opened no workspace folder; forge-lsp needs one")
        root = roots[0]
        if uri:
            path = uri_to_path(uri).resolve()
            inside = [r for r in roots if path.is_relative_to(r.resolve())]
            if not inside:
                raise JsonRpcInvalidParams(f"{uri} is not inside a workspace folder")
            root = max(inside, key=lambda r: len(r.parts))
        key = root.resolve()
        if key not in self.runtimes:
            from forge_lsp.lsp.files import EditorFiles
            from forge_lsp.runtime import WorkspaceRuntime

            runtime = WorkspaceRuntime(
                key,
                files=EditorFiles(self),
                ask=self.ask_user,
                editor_settings=self.editor_settings,
                trusted=self.client_trusted,
            )
            runtime.on_notice = self.show_notice
            self.runtimes[key] = runtime
            self.report_config(runtime)
        return self.runtimes[key]

    async def wait_configured(self) -> None:
        """Commands wait for the first workspace/configuration answer (at most a few seconds)."""
        try:
            await asyncio.wait_for(self.configured.wait(), CONFIGURATION_TIMEOUT_SECS)
        except TimeoutError:
            self.configured.set()

    # -- config ---------------------------------------------------------

    def report_config(self, runtime: WorkspaceRuntime) -> None:
        """Config and template problems as diagnostics on the file (and a log line each, up to a cap).

        In an untrusted workspace each ignored key (or template override) is a Warning at its
        line, and the user is asked once (per change of the files) whether to trust it.
        """
        from forge_lsp.config import UNTRUSTED

        by_file: dict[str, list[t.Diagnostic]] = {}
        ignored = runtime.untrusted_problems()
        problems = [p for p in runtime.effective.problems if p.code != UNTRUSTED] + ignored
        for problem in problems[:MAX_REPORTED_PROBLEMS]:
            self.log(f"config: {problem}", t.MessageType.Warning)
            if problem.path is None:
                self.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"Forge: {problem}"))
                continue
            line = (problem.line or 1) - 1
            message = f"{problem.key}: {problem.message}" if problem.key else problem.message
            if problem.code == UNTRUSTED:
                message += f"; {TRUST_HINT}"
            # A bad key is dropped alone; a file that does not parse keeps its last good values.
            elif problem.key:
                message += " (this key is ignored; the rest of the file applies)"
            else:
                message += " (the last good config stays in force)"
            diag = t.Diagnostic(
                range=convert.line_range(line),
                message=message,
                severity=t.DiagnosticSeverity.Warning if problem.code == UNTRUSTED else t.DiagnosticSeverity.Error,
                source=convert.SOURCE,
                code=problem.code,
            )
            by_file.setdefault(problem.path.as_uri(), []).append(diag)
        if len(problems) > MAX_REPORTED_PROBLEMS:
            self.log(f"config: ... and {len(problems) - MAX_REPORTED_PROBLEMS} more problems", t.MessageType.Warning)
        uris = {runtime.loader.workspace_path.as_uri(), runtime.loader.user_path.as_uri()}
        uris |= self.config_uris.get(runtime.root, set()) | set(by_file)
        for uri in uris:
            self.diagnostics.set(CONFIG_SOURCE, uri, by_file.get(uri, []))
        self.config_uris[runtime.root] = set(by_file)
        for error in runtime.templates.errors:
            self.log(error, t.MessageType.Warning)
        if ignored:
            self.spawn(self.offer_trust(runtime, ignored))

    async def offer_trust(self, runtime: WorkspaceRuntime, ignored: list[ConfigProblem]) -> None:
        """One message per change of the workspace's files: what is ignored, and a Trust button."""
        from forge_lsp.trust import fingerprint

        digest = await asyncio.get_running_loop().run_in_executor(None, fingerprint, runtime.root)
        # Trusted meanwhile (:ForgeTrust, forge.trust), or asked already about these files: nothing to ask.
        if runtime.trusted or self.trust_offered.get(runtime.root) == digest:
            return
        self.trust_offered[runtime.root] = digest
        keys = sorted({p.key or (p.path.name if p.path else "") for p in ignored})
        shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
        message = (
            f"Forge: {runtime.root.name} is not trusted, so its .forge.toml / .forge/ settings that can run code "
            f"or send data elsewhere are ignored ({shown}). Trust this workspace?"
        )
        try:
            answer = await self.window_show_message_request_async(
                t.ShowMessageRequestParams(
                    type=t.MessageType.Warning,
                    message=message,
                    actions=[t.MessageActionItem(title=TRUST), t.MessageActionItem(title=NOT_NOW)],
                )
            )
        except Exception as exc:  # a client that cannot ask: the diagnostics still say it
            self.log(f"could not ask whether to trust {runtime.root}: {exc}")
            return
        if answer is not None and answer.title == TRUST and not runtime.trusted:
            self.trust(runtime, True)

    def trust(self, runtime: WorkspaceRuntime, trusted: bool) -> dict[str, Any]:
        """Record the user's trust decision for a workspace and apply it at once."""
        runtime.set_trusted(trusted)
        verb = "trusted" if trusted else "no longer trusted"
        self.log(f"{runtime.root} is {verb}: config and templates reloaded", t.MessageType.Info)
        self.report_config(runtime)
        return {"root": str(runtime.root), "trusted": runtime.trusted, "trust": runtime.trust_state()}

    async def pull_configuration(self) -> None:
        """workspace/configuration section "forge", when the client supports it."""
        caps = self.client_capabilities.workspace
        if caps is None or not caps.configuration:
            return
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(t.ConfigurationParams(items=[t.ConfigurationItem(section="forge")])),
                CONFIGURATION_TIMEOUT_SECS,
            )
        except TimeoutError:
            self.log(
                f"workspace/configuration: no answer in {CONFIGURATION_TIMEOUT_SECS:g} s; using no editor settings",
                t.MessageType.Warning,
            )
            return
        except Exception as exc:  # a client that fails this must not stop the server
            self.log(f"workspace/configuration failed: {exc}", t.MessageType.Warning)
            return
        settings = configuration_entry(result)
        if settings is None:
            # null, [], [null] or a non-object entry: the client has no "forge" settings.
            self.log(f"workspace/configuration: no settings for section forge in the answer {json.dumps(result)[:200]}")
            settings = {}
        self.set_editor_settings(settings)

    def set_editor_settings(self, settings: Any) -> None:
        """New editor settings: reload every workspace's config."""
        # workspace/configuration is the live view; initializationOptions fill what it lacks.
        self.editor_settings = {**self.init_settings, **unwrap_settings(settings)}
        settings = self.editor_settings
        for runtime in self.runtimes.values():
            runtime.reload_config(settings, editor=True)
            self.report_config(runtime)

    def reload_files(self) -> None:
        """.forge.toml or a template changed: read them again."""
        for runtime in self.runtimes.values():
            runtime.reload_config()
            runtime.reload_templates()
            self.report_config(runtime)

    async def watch_files(self) -> None:
        """Ask the client to watch .forge.toml and .forge/templates/ (dynamic registration)."""
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is None or not watched.dynamic_registration:
            return
        options = t.DidChangeWatchedFilesRegistrationOptions(
            watchers=[
                t.FileSystemWatcher(glob_pattern=f"**/{WORKSPACE_FILE}"),
                t.FileSystemWatcher(glob_pattern="**/.forge/templates/*.md"),
            ]
        )
        registration = t.Registration(
            id="forge-config-watch", method=t.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
        )
        try:
            await self.client_register_capability_async(t.RegistrationParams(registrations=[registration]))
        except Exception as exc:
            self.log(f"could not register file watchers: {exc}", t.MessageType.Warning)

    # -- asking the user --------------------------------------------------

    async def ask_user(self, tool: str, question: str) -> str:
        """A tool needs the user's consent: Allow / Deny / Allow for this conversation."""
        actions = [t.MessageActionItem(title=a) for a in (ALLOW, DENY, ALWAYS)]
        answer = await self.window_show_message_request_async(
            t.ShowMessageRequestParams(type=t.MessageType.Warning, message=f"Forge: {question}", actions=actions)
        )
        title = answer.title if answer is not None else DENY
        return {ALLOW: "allow", ALWAYS: "always"}.get(title, "deny")

    # -- cancelling a turn ----------------------------------------------

    def cancel_turn_request(self, msg_id: str | int) -> None:
        """$/cancelRequest of a forge.run: cancel its turn."""
        root = self.requests.get(msg_id)
        if root is not None and root in self.runtimes:
            self.runtimes[root].cancel()

    def cancel_progress(self, token: str | int) -> None:
        """window/workDoneProgress/cancel of a turn's progress: cancel the turn."""
        root = self.progress_tokens.get(token)
        if root is not None and root in self.runtimes:
            self.runtimes[root].cancel()

    def shutdown_runtimes(self) -> None:
        """Cancel running turns and close every workspace's state."""
        for task in list(self.background):
            task.cancel()
        for runtime in self.runtimes.values():
            runtime.close()
