"""A minimal LSP client over stdio (benchmarks, kill -9 and load tests): no framework, full control."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import IO, Any


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


PER_ITEM = object()
"""configuration_answer default: one settings entry per workspace/configuration item, as the spec asks."""


class RawClient:
    """Starts a server and speaks JSON-RPC to it; answers server requests with null (or settings)."""

    def __init__(
        self,
        cmd: list[str],
        cwd: Path | None = None,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        configuration_answer: Any = PER_ITEM,
    ) -> None:
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
        )
        self.settings = settings
        self.configuration_answer = configuration_answer
        self.next_id = 0
        self.notifications: dict[str, int] = {}
        self.logs: list[str] = []
        self.shown: list[str] = []
        """window/showMessage texts."""
        self.asked: list[str] = []
        """window/showMessageRequest texts (each answered null)."""
        self.events: list[dict[str, Any]] = []

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def _read(self) -> dict[str, Any]:
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        length = 0
        while True:
            line = stdout.readline()
            if not line:
                raise EOFError("server closed its stdout")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(stdout.read(length))  # type: ignore[no-any-return]

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def send_request(self, method: str, params: Any) -> int:
        """Send a request without waiting; returns its id."""
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def request(self, method: str, params: Any) -> Any:
        return self.wait_response(self.send_request(method, params))

    def read_until(self, predicate: Any) -> None:
        """Handle incoming messages until predicate(message) is true."""
        while not predicate(self._handle(self._read())):
            pass

    def _handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        if "method" in msg and "id" in msg:  # a request from the server
            result: Any = None
            if msg["method"] == "window/showMessageRequest":
                self.asked.append(msg["params"]["message"])
            if msg["method"] == "workspace/configuration":
                result = self.configuration_answer
                if result is PER_ITEM:
                    result = [self.settings for _ in msg["params"]["items"]]
            self._send({"id": msg["id"], "result": result})
        elif "method" in msg:
            self.notifications[msg["method"]] = self.notifications.get(msg["method"], 0) + 1
            if msg["method"] == "window/logMessage":
                self.logs.append(msg["params"]["message"])
            elif msg["method"] == "window/showMessage":
                self.shown.append(msg["params"]["message"])
            elif msg["method"] == "forge/event":
                self.events.append(msg["params"])
        return msg

    def wait_response(self, rid: int) -> Any:
        while True:
            msg = self._read()
            if "method" in msg:
                self._handle(msg)
            elif msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg.get("result")

    def initialize(self, root: Path, initialization_options: Any = None, *, trusted: bool = True) -> float:
        """Send initialize; returns seconds from process start to the result.

        trusted: the client says the workspace is trusted (as VS Code does for a folder the user
        trusts), so its .forge.toml's scripted model or api_base applies.
        """
        uri = root.as_uri()
        if trusted and (initialization_options is None or isinstance(initialization_options, dict)):
            initialization_options = {**(initialization_options or {}), "workspaceTrusted": True}
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": root.name}],
                "capabilities": {"window": {"workDoneProgress": True}, "workspace": {"configuration": True}},
                "initializationOptions": initialization_options,
            },
        )
        return time.perf_counter() - self.started

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
