"""A pygls protocol that tells the server about executeCommand's workDoneToken and $/cancelRequest.

pygls runs a command handler as a task of its own, so cancelling the
executeCommand request does not reach it, and the handler never sees the
params' workDoneToken. Both are needed: the token to report progress on the
client's own progress, the cancel to stop the turn.

Everything it sends the client to show a person (messages, questions, progress, diagnostics,
forge/event) is redacted here, in one place: a command line or a prompt may hold a key.
Edits (workspace/applyEdit) are not: they are the file's own text.

It also takes workspace/configuration answers as they come: pygls structures
them as a list, and an answer it cannot structure (a bare null, which some
clients send) is dropped in the reader, so the request would never complete.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any

import attrs
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from forge_lsp.redact import redact

SHOWN = frozenset(
    {
        t.WINDOW_SHOW_MESSAGE,
        t.WINDOW_SHOW_MESSAGE_REQUEST,
        t.WINDOW_LOG_MESSAGE,
        t.PROGRESS,
        t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        "forge/event",
    }
)
"""What the server sends to be shown to a person: every string in it is redacted."""


def redacted(value: Any) -> Any:
    """A message's params with every string redacted (lsprotocol's attrs classes, lists, dicts)."""
    if isinstance(value, str):
        return redact(value)
    if attrs.has(type(value)):
        changes = {f.alias: redacted(getattr(value, f.name)) for f in attrs.fields(type(value)) if f.init}
        return attrs.evolve(value, **changes)
    if isinstance(value, list | tuple):
        return type(value)(redacted(v) for v in value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    return value


log = logging.getLogger(__name__)

work_done_token: contextvars.ContextVar[str | int | None] = contextvars.ContextVar("work_done_token", default=None)
request_id: contextvars.ContextVar[str | int | None] = contextvars.ContextVar("request_id", default=None)


class ForgeProtocol(LanguageServerProtocol):
    """LanguageServerProtocol plus the two hooks above."""

    on_cancel_request: Callable[[str | int], None] | None = None
    exit_code: int | None = None
    """Set by the exit notification: 0 after a shutdown request, 1 without one (the LSP spec)."""
    shutting_down: asyncio.Event | None = None
    """Set when a shutdown request arrives, set() once it is done (its handler awaits the MCP servers' stop)."""
    SHUTDOWN_WAIT_SECS = 10.0

    def notify(self, method: str, params: Any | None = None) -> None:
        super().notify(method, redacted(params) if method in SHOWN else params)

    def send_request(
        self, method: str, params: Any | None = None, callback: Callable[[Any], None] | None = None, msg_id: Any = None
    ) -> Future[Any]:
        return super().send_request(method, redacted(params) if method in SHOWN else params, callback, msg_id)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        # A request refused on purpose (bad params, a turn running, a folder that is not file://) is
        # the client's answer and one log line; pygls would log a traceback for it. Bugs keep theirs.
        error = None if future.cancelled() else future.exception()
        if not isinstance(error, JsonRpcException):
            super()._send_handler_result(future, msg_id=msg_id)
            return
        self._request_futures.pop(msg_id, None)
        log.warning("request %s refused: %s", msg_id, error)
        self._send_response(msg_id, error=error.to_response_error())

    async def _shutdown_done(self) -> None:
        if self.shutting_down is not None:
            try:
                await asyncio.wait_for(self.shutting_down.wait(), self.SHUTDOWN_WAIT_SECS)
            except TimeoutError:
                log.warning("exit: shutdown still running after %s s", self.SHUTDOWN_WAIT_SECS)

    @lsp_method(t.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # A client that sends exit right behind shutdown, without waiting for its answer: the exit is
        # the one after a shutdown (0), once the shutdown (async: it stops the MCP servers) is done.
        if self.shutting_down is not None and not self.shutting_down.is_set():
            yield self._shutdown_done, (), None
        self.exit_code = 0 if self._shutdown else 1
        server = self._server
        tcp = getattr(server, "_server", None)
        if tcp is None:
            # stdio: pygls's own exit (SystemExit, caught by start_io); the CLI returns exit_code.
            return (yield from super().lsp_exit(*args))
        # TCP: pygls would raise SystemExit inside the connection callback, which asyncio logs as an
        # unhandled exception with a traceback. Stop the connection and the listener instead.
        if (user_handler := self.fm.features.get(t.EXIT)) is not None:
            yield user_handler, args, None
        if self.writer is not None:
            self.writer.close()
        server.shutdown()
        return None

    @lsp_method(t.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        # pygls's own cancels the pending requests while iterating the dict their callbacks remove
        # them from ("dictionary changed size during iteration": shutdown failed, exit 1, a traceback,
        # whenever the editor quit during a request). The same, over a copy.
        # The pending requests are cancelled first, while self.msg_id is still this request's: after the
        # handler's await it may be another message's, and an exit waiting for this shutdown (below) is
        # pending too and must not be cancelled.
        self.shutting_down = asyncio.Event()
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        try:
            if (user_handler := self.fm.features.get(t.SHUTDOWN)) is not None:
                yield user_handler, args, None
            self._shutdown = True
        finally:
            self.shutting_down.set()
        return None

    @lsp_method(t.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: t.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        # The handler's task copies the context when it is created, below this frame.
        work_done_token.set(params.work_done_token)
        request_id.set(self._ctx_msg_id.get(None))
        return (yield from super().lsp_workspace__execute_command(params))

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        # None = pygls's generic response (result: Any): the server checks the shape itself.
        if method == t.WORKSPACE_CONFIGURATION:
            return None
        return super().get_result_type(method)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if self.on_cancel_request is not None:
            self.on_cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)
