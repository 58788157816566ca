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


def read_message(stream: Any) -> dict[str, Any]:
    """The next message the server wrote (Content-Length framing)."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


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


@pytest.mark.parametrize("verbose", [[], ["-vv"]], ids=["quiet", "-vv"])
def test_a_cancel_for_an_answered_request_is_no_warning(ws: Path, verbose: list[str]) -> None:
    # VS Code cancels code action and diagnostic requests it no longer needs, mostly after their answer:
    # pygls's warning for each filled the Forge output; it is routine, logged only at -vv (DEBUG).
    cancels = b"".join(frame({"method": "$/cancelRequest", "params": {"id": n}}) for n in (1, 7))
    stdin = session(ws, shutdown=True).replace(
        frame({"id": 2, "method": "shutdown"}), cancels + frame({"id": 2, "method": "shutdown"})
    )
    p = subprocess.run([sys.executable, "-m", "forge_lsp", *verbose], input=stdin, capture_output=True, timeout=30, env=ENV)
    assert p.returncode == 0, p.stderr.decode()
    cancelled = [line for line in p.stderr.decode().splitlines() if "Cancel notification for unknown message id" in line]
    if verbose:
        assert len(cancelled) == 2 and all(" DEBUG pygls.protocol.json_rpc: " in line for line in cancelled), cancelled
    else:
        assert cancelled == [] and b"WARNING" not in p.stderr, p.stderr.decode()


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


def test_a_refused_request_is_one_line_on_stderr_not_a_traceback() -> None:
    # A folder that is not file:// (VS Code's virtual workspaces) and a command refused for it: the client
    # gets InvalidParams; stderr gets one line each, no traceback, and no "Error in server" popup (issue 22 item 13).
    init = {"processId": None, "rootUri": None, "capabilities": {}}
    init["workspaceFolders"] = [{"uri": "vscode-vfs://github/owner/repo", "name": "repo"}]
    status = {"command": "forge.status", "arguments": [{}]}
    proc = subprocess.Popen(
        [sys.executable, "-m", "forge_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame({"id": 1, "method": "initialize", "params": init}) + frame({"method": "initialized", "params": {}}))
    proc.stdin.write(frame({"id": 2, "method": "workspace/executeCommand", "params": status}))
    proc.stdin.flush()
    seen: list[dict[str, Any]] = []
    while not any(m.get("id") == 2 for m in seen):  # the answer to forge.status, before shutting down
        length = int(proc.stdout.readline().split(b":")[1])
        while proc.stdout.readline().strip():
            pass
        seen.append(json.loads(proc.stdout.read(length)))
    stdout_rest, stderr = proc.communicate(frame({"id": 3, "method": "shutdown"}) + frame({"method": "exit"}), timeout=30)
    assert proc.returncode == 0, stderr.decode()
    (answer,) = [m for m in seen if m.get("id") == 2]
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == "only file:// URIs are supported, got 'vscode-vfs://github/owner/repo'"
    shown = [m for m in seen if m.get("method") == "window/showMessage"]
    assert not shown, shown  # no "Error in server" popup for it
    logged = [m["params"]["message"] for m in seen if m.get("method") == "window/logMessage"]
    assert any(line.startswith("cannot open the workspace: only file:// URIs") for line in logged), logged
    text = stderr.decode()
    assert "Traceback" not in text, text
    assert len([line for line in text.splitlines() if "vscode-vfs" in line]) == 1, text


def test_shutdown_while_a_request_is_pending_exits_cleanly(ws: Path) -> None:
    # The editor quits while a command is still being answered: the pending request is cancelled and
    # the server exits 0 (pygls's shutdown raised "dictionary changed size during iteration": exit 1).
    init = {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}}
    out = frame({"id": 1, "method": "initialize", "params": init}) + frame({"method": "initialized", "params": {}})
    out += frame({"id": 2, "method": "workspace/executeCommand", "params": {"command": "forge.status", "arguments": [{}]}})
    out += frame({"id": 3, "method": "shutdown"}) + frame({"method": "exit"})
    p = subprocess.run([sys.executable, "-m", "forge_lsp"], input=out, capture_output=True, timeout=30, env=ENV)
    assert p.returncode == 0, p.stderr.decode()
    assert b"Traceback" not in p.stderr
    assert b'"id": 3, "jsonrpc": "2.0", "result": null' in p.stdout


def test_the_server_exits_once_the_editors_process_is_gone(ws: Path) -> None:
    """initialize's processId names the editor: once that process is gone, forge-lsp exits even while its
    input stays open (an editor that quit while the server was still stopping could leave it behind, and
    its MCP servers with it)."""
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    init = {"id": 1, "method": "initialize", "params": {"processId": editor.pid, "rootUri": ws.as_uri(), "capabilities": {}}}
    proc = subprocess.Popen(
        [sys.executable, "-m", "forge_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(init) + frame({"method": "initialized", "params": {}}))
        proc.stdin.flush()  # and kept open: only the editor's process ends
        assert read_message(proc.stdout)["id"] == 1  # initialize answered: the server watches the editor now
        time.sleep(0.5)
        assert proc.poll() is None, "exited while the editor still ran"
        editor.kill()  # the editor goes (events, not clocks: it lived until the server knew of it)
        editor.wait()
        assert proc.wait(60) == 0
    finally:
        if editor.poll() is None:
            editor.kill()
            editor.wait()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
