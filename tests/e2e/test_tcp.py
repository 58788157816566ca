"""forge-lsp --tcp HOST PORT serves the same protocol over a socket."""

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


def read_message(sock_file: Any) -> dict[str, Any]:
    length = 0
    while (line := sock_file.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sock_file.read(length))  # type: ignore[no-any-return]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_tcp_initialize_and_status(ws: Path) -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "forge_lsp", "--tcp", "127.0.0.1", str(port)], env=ENV)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not listen"
                time.sleep(0.1)
        sock.settimeout(30)
        f = sock.makefile("rb")
        sock.sendall(
            frame({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}}})
        )
        init = read_message(f)
        assert "forge.run" in init["result"]["capabilities"]["executeCommandProvider"]["commands"]
        sock.sendall(frame({"method": "initialized", "params": {}}))
        sock.sendall(
            frame({"id": 2, "method": "workspace/executeCommand", "params": {"command": "forge.status", "arguments": [{}]}})
        )
        while (msg := read_message(f)).get("id") != 2:
            pass
        assert msg["result"]["running"] is False and msg["result"]["limit"] == 3
        sock.close()
    finally:
        server.kill()
        server.wait()
