"""A fork server for the suite's forge-lsp processes: the server's imports paid once per pytest worker, not per test.

Every end-to-end test starts its own server (the language server, the ACP agent, `forge-lsp run`), and most of a
start is importing (lsprotocol's attrs classes, pygls, the ACP SDK's pydantic models: about a second of a core).
`command(*args)` is the command line of such a process; run, it is support/forkshim.py, which asks the fork
server to fork a copy of itself that has those modules loaded and is then `forge-lsp ARGS` with the shim's stdin,
stdout, stderr, arguments, environment and working directory. The server's code is the same; only its imports
happened earlier, in another process. Tests of the start itself (what is imported, how fast, the caches) run the
real command, as do the editors' and the node clients' tests.

FORGE_TEST_FORK=0 turns it off: `command()` is then `python -m forge_lsp`.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import io
import json
import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

SHIM = str(Path(__file__).with_name("forkshim.py"))
_started: str | None = None
_lock = threading.Lock()


def enabled() -> bool:
    """Whether the suite's processes are forked (FORGE_TEST_FORK=0 starts the real command everywhere)."""
    return os.environ.get("FORGE_TEST_FORK", "1") != "0"


def command(*args: str) -> list[str]:
    """The command line of `python -m forge_lsp ARGS`, forked from this worker's fork server when it runs."""
    if not enabled():
        return [sys.executable, "-m", "forge_lsp", *args]
    return [sys.executable, "-I", "-S", SHIM, _socket(), sys.executable, *args]


def python_for_editors() -> str:
    """A `python` for an editor's settings (the Neovim tests' FORGE_PYTHON): `-m forge_lsp ARGS` is `command(ARGS)`,
    anything else this Python. Beside it, links to the rest of this Python's bin folder (ruff, forge-lsp, ...), which
    the tests find next to their python as a user's editor finds them in the venv."""
    if not enabled():
        return sys.executable
    sock = _socket()
    folder = os.path.join(os.path.dirname(sock), "bin")
    wrapper = os.path.join(folder, "python")
    if not os.path.exists(wrapper):
        os.makedirs(folder, exist_ok=True)
        real_bin = os.path.dirname(sys.executable)
        for name in os.listdir(real_bin):
            if name != "python":
                with contextlib.suppress(FileExistsError):
                    os.symlink(os.path.join(real_bin, name), os.path.join(folder, name))
        py, shim = shlex.quote(sys.executable), shlex.quote(SHIM)
        Path(wrapper + ".new").write_text(
            "#!/bin/sh\n"
            'if [ "$1" = "-m" ] && [ "$2" = "forge_lsp" ]; then\n'
            "  shift 2\n"
            f'  exec {py} -I -S {shim} {shlex.quote(sock)} {py} "$@"\n'
            "fi\n"
            f'exec {py} "$@"\n'
        )
        os.chmod(wrapper + ".new", 0o755)
        os.rename(wrapper + ".new", wrapper)
    return wrapper


def _socket() -> str:
    """This process's fork server's socket, started on first use (it ends with this process)."""
    global _started
    with _lock:
        if _started is None:
            folder = tempfile.mkdtemp(prefix="forge-fork-")
            path = os.path.join(folder, "sock")
            proc = subprocess.Popen(
                [sys.executable, __file__, path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )
            atexit.register(_stop, proc, folder)
            _started = path  # the shim runs the real command until the socket is there
        return _started


def _stop(proc: subprocess.Popen[bytes], folder: str) -> None:
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


# ---- the fork server itself ----


def _preload() -> None:
    """What forge-lsp processes import as they start and serve: every module of the package (the language server,
    the ACP agent, the headless run, the tools) and the libraries it loads on first use, except litellm: the suite's
    servers serve the scripted model without it, and the tests of the model path load it as a user's server does."""
    import importlib
    import pkgutil

    import forge_lsp
    from forge_lsp.code_cache import attrs_compiled_once

    with attrs_compiled_once():
        import forge_lsp.lsp.server  # noqa: F401
    for module in pkgutil.walk_packages(forge_lsp.__path__, "forge_lsp."):
        if module.name != "forge_lsp.__main__":  # it runs the command
            importlib.import_module(module.name)
    from forge_lsp.template_cache import _pybars

    _pybars()
    for name in ("jsonschema", "mcp.client.session", "mcp.client.stdio", "mcp.client.streamable_http", "re2", "httpx"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _serve(path: str, read_exactly: Callable[[socket.socket, int], bytes]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: ends with the pytest worker that started it
    _preload()
    if threading.active_count() > 1:  # forking a process with threads could copy a lock held: no fork server
        sys.exit(f"forkserver: the preloaded modules started threads ({threading.enumerate()}); not serving")
    waiting: dict[int, socket.socket] = {}

    def reap(_signum: int, _frame: object) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = waiting.pop(pid, None)
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):
                    conn.sendall(struct.pack("!i", code))
                conn.close()

    signal.signal(signal.SIGCHLD, reap)
    # What is loaded stays shared with the servers: the collector of a forked server never walks (and so copies)
    # the preloaded objects.
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)
    while True:
        conn, _ = listener.accept()
        fds: list[int] = []
        try:
            head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
            if len(head) < 4 or len(fds) != 3:
                raise ConnectionError("a malformed request")
            (size,) = struct.unpack("!I", head)
            request = json.loads(read_exactly(conn, size))
        except (OSError, ValueError):
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # its status is not sent before its pid
        pid = os.fork()
        if pid == 0:
            listener.close()
            for other in waiting.values():
                other.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
            _become_server(conn, fds, request)  # never returns
        for fd in fds:
            os.close(fd)
        waiting[pid] = conn
        with contextlib.suppress(OSError):
            conn.sendall(struct.pack("!i", pid))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])


def _become_server(conn: socket.socket, fds: list[int], request: dict) -> None:  # type: ignore[type-arg]
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN if request["sigint_ignored"] else signal.default_int_handler)
    _fresh_stdio(bool(request["env"].get("PYTHONUNBUFFERED")))
    sys.argv = [os.path.join(os.path.dirname(sys.modules["forge_lsp"].__file__ or ""), "__main__.py"), *request["argv"]]

    def watch() -> None:
        """The shim killed (SIGKILL, which it cannot pass on): the server goes as it would have."""
        with contextlib.suppress(OSError):
            while conn.recv(1):
                pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="fork-shim-watch", daemon=True).start()
    from forge_lsp.cli.app import main

    raise SystemExit(main(request["argv"]))


def _fresh_stdio(unbuffered: bool) -> None:
    """stdin, stdout and stderr as Python makes them at start for these descriptors."""

    def text(fd: int, mode: str, line: bool, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: io.RawIOBase | io.BufferedIOBase = raw
        if not (unbuffered and mode == "w"):
            buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(
            buffered,  # type: ignore[arg-type]
            encoding="utf-8",
            errors=errors,
            line_buffering=line and not unbuffered,
            write_through=unbuffered and mode == "w",
        )

    sys.stdin = sys.__stdin__ = text(0, "r", False, "strict")
    sys.stdout = sys.__stdout__ = text(1, "w", os.isatty(1), "strict")
    sys.stderr = sys.__stderr__ = text(2, "w", True, "backslashreplace")


if __name__ == "__main__":
    from forkshim import read_exactly  # beside this file, imported before its folder leaves sys.path

    del sys.path[0]  # this folder: the servers import as `python -m forge_lsp` would, not from tests/support
    _serve(sys.argv[1], read_exactly)
