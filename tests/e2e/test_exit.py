"""The process's exit: 0 after shutdown + exit, 1 for exit without shutdown (LSP spec), quiet over stdio and TCP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ENV

pytestmark = pytest.mark.timeout(60)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def session(ws: Path, shutdown: bool) -> bytes:
    init = {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}}}
    out = frame(init) + frame({"method": "initialized", "params": {}})
    if shutdown:
        out += frame({"id": 2, "method": "shutdown"})
    return out + frame({"method": "exit"})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
def test_stdio_exit_code(ws: Path, shutdown: bool, code: int) -> None:
    p = subprocess.run([sys.executable, "-m", "forge_lsp"], input=session(ws, shutdown), capture_output=True, timeout=30, env=ENV)
    assert p.returncode == code, p.stderr.decode()
    assert b"Traceback" not in p.stderr


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
def test_tcp_exit_code_and_no_traceback(ws: Path, shutdown: bool, code: int) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "forge_lsp", "--tcp", "127.0.0.1", str(port)], env=ENV, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not listen"
                time.sleep(0.1)
        with sock:
            sock.sendall(session(ws, shutdown))
            _, err = server.communicate(timeout=30)
        assert server.returncode == code, err.decode()
        assert b"Traceback" not in err and b"SystemExit" not in err, err.decode()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
