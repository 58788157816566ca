"""One MCP server's connection, on the official SDK: started in a task of its own, its tools listed, calls made.

The SDK's transports and session are async context managers (anyio task groups): they are entered
and left in one task, McpServer._serve, which holds the connection until stop(). Calls come from
turns (other tasks) through the session. Every failure becomes `state = "failed"` with a reason in
one line; nothing here raises into a turn.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from forge_lsp import __version__
from forge_lsp.mcp_config import ServerSpec
from forge_lsp.patterns import guard_jsonschema
from forge_lsp.redact import add_secrets, redact
from forge_lsp.tools.mcp.guard import guarded

log = logging.getLogger(__name__)

STARTING, READY, FAILED, DISABLED, STOPPED = "starting", "ready", "failed", "disabled", "stopped"
STDERR_LINES = 20
"""The last lines a server wrote to stderr, kept for the reason it failed."""
MAX_TOOL_PAGES = 50


MAX_PATH_SHOWN = 400
"""Of the PATH a command was looked for in, in its failure (a notification, a diagnostic)."""


class CommandNotFound(FileNotFoundError):
    """A stdio server's command is not there; the message says where it was looked for (an editor's PATH is
    not the shell's: a command installed in a virtual environment is not on it)."""

    def __init__(self, where: str, command: str) -> None:
        super().__init__(2, where, command)


class ServerGone(Exception):
    """The server is not connected (it failed, crashed or was stopped): a call cannot be made."""


class NotStartedHere(Exception):
    """A stdio server's working folder is inside a workspace that is not trusted: it is not started (why)."""


def working_folder(spec: ServerSpec, root: Path, trusted: bool) -> Path:
    """Where a stdio server runs: its entry's cwd (relative to the workspace), or the workspace itself, in a
    trusted workspace; in one that is not trusted, an empty folder of the user's outside it.

    A server's working folder is where `python -m NAME` looks first for NAME (sys.path[0]), and where npx,
    uvx and `uv run` read a project's package.json, node_modules, pyproject.toml or uv.toml: a clone holding
    mcp_server_time/__init__.py would run its code in the user's own `python -m mcp_server_time`. So an
    untrusted workspace is never a server's working folder; an entry that names a cwd inside it is refused
    (NotStartedHere) rather than started somewhere its relative paths do not mean."""
    if spec.cwd:
        cwd = (root / spec.cwd).resolve()
        if trusted or not (cwd == root or root in cwd.parents):
            return cwd
        raise NotStartedHere(
            f"its cwd {spec.cwd!r} is inside this workspace, which is not trusted: a server started there can run the "
            "workspace's code (python -m, npx, uvx and uv run look there first); trust the workspace, or give a cwd "
            "outside it"
        )
    if trusted:
        return root
    return neutral_folder(root)


def neutral_folder(root: Path) -> Path:
    """An empty folder of the user's, outside root: $XDG_STATE_HOME/forge-lsp/mcp (made 0700), or a new
    temporary folder when that is inside root or cannot be made one's own."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "forge-lsp" / "mcp"
    try:
        real = base.resolve()
        if not (real == root or root in real.parents):
            real.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = real.lstat()
            if info.st_uid == os.getuid() and stat.S_ISDIR(info.st_mode):
                return real
    except (OSError, RuntimeError) as exc:
        log.info("MCP: %s cannot be a server's folder (%s); a temporary folder is used", base, exc)
    return Path(tempfile.mkdtemp(prefix="forge-lsp-mcp-"))


def leaf(exc: BaseException) -> BaseException:
    """An exception group's first leaf (the exception itself when it is not a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def one_line(exc: BaseException) -> str:
    """An exception in one line; an exception group as its first leaf."""
    exc = leaf(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


class _StderrTail:
    """A pipe for a server's stderr: its lines logged, the last STDERR_LINES kept for a failure's reason."""

    def __init__(self, name: str) -> None:
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self.lines: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._thread = threading.Thread(target=self._read, args=(read_fd, name), daemon=True, name=f"mcp-stderr-{name}")
        self._thread.start()

    def _read(self, fd: int, name: str) -> None:
        with os.fdopen(fd, "r", errors="replace") as pipe:
            for line in pipe:
                line = line.rstrip()
                if line:
                    self.lines.append(line)
                    log.debug("mcp %s stderr: %s", name, line[:500])

    def drained(self, timeout: float) -> None:
        """Wait (at most timeout s) until the server's stderr is read to its end."""
        self._thread.join(timeout)

    def close_writer(self) -> None:
        if not self.writer.closed:
            self.writer.close()

    def last(self) -> str:
        """The last thing the server said on stderr, briefly."""
        return self.lines[-1][:200] if self.lines else ""


class McpServer:
    """One configured server: its state, its tools, and calls to them."""

    def __init__(self, spec: ServerSpec, root: Path, trusted: Callable[[], bool] = lambda: False) -> None:
        add_secrets(spec.secrets)  # what its ${NAME}s expanded to: redacted from its reasons, and everywhere
        self.spec = spec
        self.root = root
        self.trusted = trusted
        self.state = DISABLED if spec.disabled else STOPPED
        self.reason: str | None = spec.error if not spec.disabled else None
        if spec.error and not spec.disabled:
            self.state = FAILED
        self.tools: list[Any] = []
        """The SDK's Tool objects as last listed."""
        self.session: Any = None
        self.stale = False
        """The server said its tool list changed (notifications/tools/list_changed): list again before the next request."""
        self.started_at: float | None = None
        self.ready_after: float | None = None
        """Seconds from start to its tools being listed."""
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._stderr: _StderrTail | None = None
        self._timeout = 0.0
        self.on_change: Any = None
        """Called (no arguments) when the state or the tools change."""

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self, timeout: float) -> None:
        """Start connecting (in the background) when not started yet; a failed or disabled one stays so."""
        if self.state != STOPPED or self._task is not None:
            return
        self.state = STARTING
        self.reason = None
        self._timeout = timeout
        self.started_at = time.perf_counter()
        self._ready.clear()
        self._stop.clear()
        self._task = asyncio.get_running_loop().create_task(self._serve(timeout), name=f"mcp-{self.name}")

    async def wait_ready(self, timeout: float) -> None:
        """Wait until it is ready or failed, at most timeout seconds; still starting then: failed, stopped."""
        if self.state != STARTING:
            return
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            if self.state == STARTING:
                self._fail(f"did not answer within {timeout:g} s ([mcp] startup_timeout_secs)")
                await self.stop()

    def _fail(self, reason: str) -> None:
        if self.state in (DISABLED, STOPPED, FAILED):
            return
        extra = self._stderr.last() if self._stderr and self.state == STARTING else ""
        if extra and extra not in reason:
            reason = f"{reason} (it said: {extra})"
        # Redacted here, once, for every place the reason goes (forge.status, the log, a chat, a diagnostic): a
        # reason names the url or the command line, which the entry's ${NAME}s may have filled in.
        reason = redact(reason)
        log.info("MCP server %s failed: %s", self.name, reason)
        self.state, self.reason = FAILED, reason
        self.session = None
        self._ready.set()
        if self.on_change:
            self.on_change()

    async def _serve(self, timeout: float) -> None:
        try:
            import anyio

            async with AsyncExitStack() as stack:
                # Entering the transport and the session only starts them (a process, tasks); the waiting is in
                # initialize and the listing, which the timeout bounds (a cancel scope around the entering would
                # not be left in the order it was entered).
                read, write = await stack.enter_async_context(self._transport())
                ended = asyncio.Event()
                if self.spec.transport == "stdio":
                    read = await self._watch(stack, read, ended)
                from mcp.client.session import ClientSession
                from mcp_types import Implementation

                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_message,
                        client_info=Implementation(name="forge-lsp", version=__version__),
                    )
                )
                with anyio.fail_after(timeout):
                    await session.initialize()
                    self.tools = await self._list(session)
                self.session = session
                self.state = READY
                self.ready_after = time.perf_counter() - (self.started_at or time.perf_counter())
                log.info("MCP server %s ready: %d tools in %.2f s", self.name, len(self.tools), self.ready_after)
                self._ready.set()
                if self.on_change:
                    self.on_change()
                await self._until_stop_or(ended)
                if not self._stop.is_set():  # the process exited (or closed its output) while idle
                    await self._exited()
        except TimeoutError:
            self._fail(f"did not answer within {timeout:g} s ([mcp] startup_timeout_secs)")
        except asyncio.CancelledError:
            self._fail("stopped")
            raise
        except NotStartedHere as exc:
            self._fail(str(exc))
        except FileNotFoundError as exc:
            why = exc.strerror if isinstance(exc, CommandNotFound) else "not found"
            self._fail(f"cannot start {exc.filename or self.spec.command}: {why}")
        except Exception as exc:  # any failure of the server is its state, never the turn's
            log.debug("MCP server %s", self.name, exc_info=True)
            self._fail(self._reason(exc))
        finally:
            self.session = None
            if self._stderr is not None:
                self._stderr.close_writer()
            if self.state in (STARTING, READY):
                if self._stop.is_set():  # stopped as asked: not a failure
                    self.state, self.tools = STOPPED, []
                else:
                    self._fail("the connection ended")
            self._ready.set()

    async def _watch(self, stack: AsyncExitStack, read: Any, ended: asyncio.Event) -> Any:
        """The session's read stream, through a pump that sets ended when the server's output ends (its process
        exited): the SDK's session says nothing of that until the next request."""
        import anyio

        send, receive = anyio.create_memory_object_stream[Any](16)
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)  # left before the group: the pump ends with the connection

        async def pump() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            finally:
                ended.set()

        group.start_soon(pump)
        return receive

    async def _until_stop_or(self, ended: asyncio.Event) -> None:
        """Wait until stop() is called or the server's output ends."""
        waits = [asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(ended.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    async def _exited(self) -> None:
        """The server exited on its own while ready: failed now, with the last thing it said."""
        if self._stderr is not None:  # its last words may still be in the pipe
            await asyncio.to_thread(self._stderr.drained, 1.0)
        said = self._stderr.last() if self._stderr is not None else ""
        self._fail(f"the server exited{f' (it said: {said})' if said else ''}")

    def _reason(self, exc: BaseException) -> str:
        if isinstance(leaf(exc), TimeoutError):
            return f"did not answer within {self._timeout:g} s ([mcp] startup_timeout_secs)"
        text = one_line(exc)
        lowered = text.lower()
        if "connection closed" in lowered or "closed" in lowered and self.spec.transport == "stdio":
            return f"the server exited{' or closed its output' if self.spec.transport == 'stdio' else ''}: {text}"
        if "connect" in lowered and self.spec.transport != "stdio":
            return f"cannot connect to {self.spec.url}: {text}"
        return f"it did not start as an MCP server: {text}" if self.state == STARTING else text

    @asynccontextmanager
    async def _transport(self) -> Any:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert spec.command is not None
            cwd = await asyncio.to_thread(working_folder, spec, self.root, self.trusted())
            env = dict(spec.env)
            path = env.get("PATH", os.environ.get("PATH", os.defpath))
            command = spec.command
            found: str | None
            if "/" in command:
                found = str((cwd / command).resolve()) if not os.path.isabs(command) else command
                if not os.access(found, os.X_OK):
                    found = None
            else:
                found = shutil.which(command, path=path)
            if found is None:
                if "/" in command:
                    raise CommandNotFound(f"no executable file at {(cwd / command).resolve()}", command)
                whose = "the PATH its env sets" if "PATH" in env else "PATH"
                shown = path if len(path) <= MAX_PATH_SHOWN else path[:MAX_PATH_SHOWN] + "…"
                raise CommandNotFound(f"not found on {whose} ({shown}); give its full path as command", command)
            program, argv = guarded(found, list(spec.args))
            params = StdioServerParameters(command=program, args=argv, env=env or None, cwd=cwd)
            self._stderr = _StderrTail(self.name)
            try:
                async with stdio_client(params, errlog=self._stderr.writer) as streams:
                    self._stderr.close_writer()  # the server holds its own copy
                    yield streams
            finally:
                self._stderr.close_writer()
        elif spec.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            assert spec.url is not None
            async with (
                create_mcp_http_client(headers=dict(spec.headers) or None) as client,
                streamable_http_client(spec.url, http_client=client) as streams,
            ):
                yield streams[0], streams[1]
        else:
            from mcp.client.sse import sse_client

            assert spec.url is not None
            async with sse_client(spec.url, headers=dict(spec.headers) or None) as streams:
                yield streams[0], streams[1]

    async def _list(self, session: Any) -> list[Any]:
        from mcp_types import PaginatedRequestParams

        tools: list[Any] = []
        cursor = None
        for _ in range(MAX_TOOL_PAGES):
            result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        return tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            log.debug("MCP server %s: %s", self.name, one_line(message))
            return
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed":
            log.info("MCP server %s: its tools changed", self.name)
            self.stale = True

    async def refresh(self) -> bool:
        """List the tools again when the server said they changed; True when it did."""
        if not self.stale or self.session is None:
            return False
        self.stale = False
        try:
            self.tools = await self._list(self.session)
        except Exception as exc:  # a server that cannot list its tools now: failed
            self._fail(f"listing its tools again failed: {one_line(exc)}")
            await self.stop()
        if self.on_change:
            self.on_change()
        return True

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The SDK's CallToolResult; ServerGone when not connected, the SDK's errors as they come."""
        session = self.session
        if session is None or self.state != READY:
            raise ServerGone(self.reason or f"the MCP server {self.name} is {self.state}")
        # The SDK checks a tool's structured output against the server's outputSchema with jsonschema, on the
        # event loop: the server's patterns are matched with RE2 there too (imported at the first call, not at start).
        guard_jsonschema()
        return await session.call_tool(tool, arguments)

    def mark_dead(self, reason: str) -> None:
        """A call found the server gone (it crashed): failed, with why; restart starts it again."""
        if self.state == READY:
            self._fail(reason)
            asyncio.get_running_loop().create_task(self.stop())

    async def stop(self) -> None:
        """Close the connection (a stdio server's process group with it); wait for it, bounded."""
        task, self._task = self._task, None
        self._stop.set()
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 8)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception:  # the task records its own failure
            pass

    def status(self) -> dict[str, Any]:
        """{name, state, tools: N, reason?, source}."""
        out: dict[str, Any] = {
            "name": self.name,
            "state": self.state if self.state != STOPPED else STARTING,
            "source": self.spec.source,
        }
        out["tools"] = len(self.tools) if self.state == READY else 0
        if self.reason and self.state == FAILED:
            out["reason"] = self.reason
        return out
