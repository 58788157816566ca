"""What the MCP tests share: the servers (real ones, and the SDK-built flaky one), their entries, process checks.

tests/mcp is not a package (no __init__.py): as one, `import mcp` in the test process would find it, not the SDK.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
FLAKY = str(HERE / "servers" / "flaky.py")
EVERYTHING = HERE / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def searched_path() -> str:
    """The PATH a stdio server's command was looked for in, as its failure shows it (this process's, as the server
    under test inherits it; cut at MAX_PATH_SHOWN)."""
    from forge_lsp.tools.mcp.server import MAX_PATH_SHOWN

    path = os.environ.get("PATH", os.defpath)
    return path if len(path) <= MAX_PATH_SHOWN else path[:MAX_PATH_SHOWN] + "…"


def time_server() -> dict[str, Any]:
    """mcp-server-time (PyPI, the dev extra), over stdio."""
    found = shutil.which("mcp-server-time")
    if found is None:
        pytest.skip("mcp-server-time is not installed (pip install -e '.[dev]')")
    return {"command": found}


def everything_stdio() -> dict[str, Any]:
    """@modelcontextprotocol/server-everything (npm, tests/mcp/node), over stdio."""
    if not EVERYTHING.exists() or shutil.which("node") is None:
        if os.environ.get("CI"):
            raise AssertionError("tests/mcp/node is not installed (cd tests/mcp/node && npm ci)")
        pytest.skip("server-everything is not installed (cd tests/mcp/node && npm ci)")
    return {"command": "node", "args": [str(EVERYTHING), "stdio"]}


def flaky(*args: str) -> dict[str, Any]:
    """The SDK-built server of tests/mcp/servers/flaky.py."""
    return {"command": sys.executable, "args": [FLAKY, *args]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpEverything:
    """server-everything over HTTP on a free loopback port, for one test: streamable HTTP, or legacy SSE."""

    def __init__(self, transport: str = "streamableHttp") -> None:
        entry = everything_stdio()
        self.port = free_port()
        env = {**os.environ, "PORT": str(self.port)}
        self.proc = subprocess.Popen(
            [entry["command"], entry["args"][0], transport],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise AssertionError("server-everything did not listen") from None
                time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/{'sse' if transport == 'sse' else 'mcp'}"

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()


def descendants(pid: int) -> set[int]:
    """Every process below pid (children, their children ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_gone(pids: set[int], timeout: float = 10.0) -> set[int]:
    """The pids still alive after waiting up to timeout for them to end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {p for p in pids if alive(p)}
        if not left:
            return set()
        time.sleep(0.05)
    return {p for p in pids if alive(p)}
