"""ForgeLanguageServer: the server's state (runtimes, diagnostics, requests and progress of turns) and its plumbing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from forge_lsp import __version__
from forge_lsp.core.wording import GENERIC
from forge_lsp.core.workspaces import Workspaces
from forge_lsp.lsp.coalesce import TextCoalescer
from forge_lsp.lsp.diagnostics import DiagnosticStore
from forge_lsp.lsp.document_changes import DocumentChanges
from forge_lsp.lsp.file_failures import FileFailures
from forge_lsp.lsp.protocol import ForgeProtocol
from forge_lsp.lsp.user_saves import UserSaves
from forge_lsp.render import EventLines

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.trust import EditorTrust

# The runtime (config, templates, tools, state) is imported on first use, not at start:
# initialize must answer as fast as a bare pygls server.

log = logging.getLogger(__name__)

EVENT_NOTIFICATION = "forge/event"
CONFIGURATION_TIMEOUT_SECS = 5.0
"""How long initialized waits for the client's workspace/configuration answer."""
ALLOW, DENY, ALWAYS = "Allow", "Deny", "Allow for this conversation"


def uri_to_path(uri: str) -> Path:
    """A file:// URI as a path."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise JsonRpcInvalidParams(f"only file:// URIs are supported, got {uri!r}")
    return Path(unquote(parsed.path))


class ForgeLanguageServer(LanguageServer):
    """Holds one WorkspaceRuntime per workspace folder and the diagnostics of their turns."""

    def __init__(self, open_runtime: Callable[[ForgeLanguageServer, Path], WorkspaceRuntime]) -> None:
        """open_runtime: makes a workspace folder's runtime, wired to this server (lsp/folders.py)."""
        super().__init__("forge-lsp", __version__, protocol_cls=ForgeProtocol)
        self.workspaces = Workspaces(lambda root: open_runtime(self, root))
        self.diagnostics = DiagnosticStore(self._publish)
        self.file_failures = FileFailures(self.diagnostics)
        """The current turn's diagnostics on the files its tools failed on."""
        self.editor_settings: Any = None
        self.init_settings: dict[str, Any] = {}
        self.settings_asked = 0
        """Settings news numbered as they come (a pull when sent, a push when received): the newest wins."""
        self.settings_applied = 0
        """The number of the settings in force: a pull answered after a newer push or pull is set aside."""
        self.editor_trust: EditorTrust | None = None
        """The client's own word at initialize that the user trusts the workspace (VS Code's workspace.isTrusted,
        Neovim's vim.secure of .forge.toml) and what it covers; None: it said nothing, or not trusted."""
        self.wording = GENERIC
        """How the client names its ways to trust a workspace and to set the model (initialize says)."""
        self.config_uris: dict[Path, set[str]] = {}
        """Per workspace, the files that carry its config diagnostics (to clear them on the next report)."""
        self.trust_offered: dict[Path, str] = {}
        """Per workspace, the fingerprint the Trust question was last asked for (asked once per change)."""
        self.problems_told: dict[Path, set[str]] = {}
        """Per workspace, the config problems in files not open already said in a message (config_report)."""
        self.trust_refused: dict[Path, str] = {}
        """Per workspace, why the client's trust did not apply, as last said (said once per reason)."""
        self.user_saves = UserSaves()
        """Which saves of .forge.toml (and the other files trust covers) are the user's own."""
        self.document_changes = DocumentChanges()
        """The client's document changes as they come: an edit of the agent waits for the client's report of it."""
        self.background: set[asyncio.Task[Any]] = set()
        self.requests: dict[str | int, Path] = {}
        self.events = TextCoalescer(lambda payload: self.protocol.notify(EVENT_NOTIFICATION, payload))
        """forge/event out, streamed assistantText merged to ~20 a second."""
        self.progress_tokens: dict[str | int, Path] = {}
        self.event_lines: dict[str, EventLines] = {}
        """Per turn, its events as log lines (streamed text logged as one line when the message is complete)."""
        self.configured = asyncio.Event()
        assert isinstance(self.protocol, ForgeProtocol)
        self.protocol.on_cancel_request = self.cancel_turn_request

    # -- plumbing -------------------------------------------------------

    def _publish(self, uri: str, diagnostics: list[t.Diagnostic]) -> None:
        # A failed call's error text may echo a secret: the protocol redacts what it publishes.
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
        """window/logMessage (secrets redacted by the protocol, as everything shown)."""
        self.window_log_message(t.LogMessageParams(type=kind, message=message))

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

    async def wait_configured(self) -> None:
        """Commands wait for the first workspace/configuration answer (at most a few seconds)."""
        try:
            await asyncio.wait_for(self.configured.wait(), CONFIGURATION_TIMEOUT_SECS)
        except TimeoutError:
            self.configured.set()

    # -- asking the user --------------------------------------------------

    async def ask_user(self, tool: str, question: str, call_id: str | None = None) -> str:
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
        runtime = self.workspaces.find(root) if root is not None else None
        if runtime is not None:
            runtime.cancel()

    def cancel_progress(self, token: str | int) -> None:
        """window/workDoneProgress/cancel of a turn's progress: cancel the turn."""
        root = self.progress_tokens.get(token)
        runtime = self.workspaces.find(root) if root is not None else None
        if runtime is not None:
            runtime.cancel()

    def shutdown_runtimes(self) -> None:
        """Cancel running turns and close every workspace's state."""
        for task in list(self.background):
            task.cancel()
        self.workspaces.close_all()
