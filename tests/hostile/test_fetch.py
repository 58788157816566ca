"""The fetch tool turned against its user (issue 22, items 9 to 11): each test is one attack.

The model (and so whoever wrote a page it read) chooses the URL; the user's machine, local
network and cloud metadata service are behind it. Nothing here talks to any address but
loopback servers a test starts itself: every other connect is refused by the `net` fixture
before it is made (and recorded), and names resolve only through its stub table.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import ipaddress
import json
import os
import socket
import subprocess
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.domain.config import ForgeConfig, build, default_values, validate
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

from support import forkserver

pytestmark = pytest.mark.timeout(60)

Record = Callable[[str, str, str], None]
ALLOW = "[tools.fetch]\nallow_private_networks = true\n"
"""How a user lets fetch reach this machine (the tests' servers are on loopback)."""
PUBLIC = "8.8.4.4"
"""A public address the `net` fixture pretends to be: a connect to it goes to a loopback server instead."""


def config(toml: str = "") -> ForgeConfig:
    """The settings a user file of this text gives (an unknown key is dropped alone, as in a real file)."""
    good, _issues = validate(tomllib.loads(toml))
    return replace(build({**default_values(), **good}), trusted=True)


async def fetch(cfg: ForgeConfig, url: str, root: Path, **args: Any) -> ToolResult:
    ctx = ToolContext(Workspace(root), cfg)
    result, _ = await ToolRegistry().call(ToolCall("c1", "fetch", json.dumps({"url": url, **args})), ctx)
    return result


@dataclass
class Net:
    """A stub resolver and a connect guard: only loopback is ever reached."""

    names: dict[str, list[str]] = field(default_factory=dict)
    """host -> the addresses it resolves to (a list per lookup, the last one repeated: DNS rebinding)."""
    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    routes: dict[str, int] = field(default_factory=dict)
    """A pretend public address -> the loopback port a connect to it reaches."""
    refused: list[Any] = field(default_factory=list)
    """Every connect to an address that is not loopback: never made."""
    lookups: list[str] = field(default_factory=list)


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Net:
    state = Net()
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> Any:  # noqa: A002
        name = host.decode() if isinstance(host, bytes) else str(host)
        state.lookups.append(name)
        if name in state.answers:
            queue = state.answers[name]
            addrs = queue.pop(0) if len(queue) > 1 else queue[0]
        elif name in state.names:
            addrs = state.names[name]
        elif name == "localhost":
            addrs = ["127.0.0.1"]
        else:  # numeric only: no test ever asks a real DNS server
            return real_getaddrinfo(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
        out = []
        for a in addrs:
            v6 = ":" in a
            fam = socket.AF_INET6 if v6 else socket.AF_INET
            out.append((fam, socket.SOCK_STREAM, 6, "", (a, int(port or 0), 0, 0) if v6 else (a, int(port or 0))))
        return out

    def target(address: Any) -> Any:
        if not isinstance(address, tuple):
            return address
        host, port = address[0], address[1]
        if host in state.routes:
            return ("127.0.0.1", state.routes[host])
        try:
            if ipaddress.ip_address(host).is_loopback:
                return address
        except ValueError:
            pass
        state.refused.append(address)
        raise ConnectionRefusedError(f"test guard: no connection to {host}:{port} (only loopback)")

    def connect(self: socket.socket, address: Any) -> None:
        return real_connect(self, target(address))

    def connect_ex(self: socket.socket, address: Any) -> int:
        return real_connect_ex(self, target(address))

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return state


class Page(http.server.BaseHTTPRequestHandler):
    """Answers GET with the server's `route` (path -> (status, headers, body)); records each request."""

    def do_GET(self) -> None:  # noqa: N802
        server: Any = self.server
        server.requests.append(self.path)
        status, headers, body = server.route.get(self.path, (200, {"Content-Type": "text/plain"}, b"hello"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_server(route: dict[str, tuple[int, dict[str, str], bytes]] | None = None, host: str = "127.0.0.1") -> Iterator[Any]:
    cls = type(
        "Server", (http.server.ThreadingHTTPServer,), {"address_family": socket.AF_INET6 if ":" in host else socket.AF_INET}
    )
    server: Any = cls((host, 0), Page)
    server.daemon_threads = True
    server.route, server.requests = route or {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class Listener:
    """A bare TCP listener on loopback that records whether anything connected, and what it sent."""

    def __init__(self, greeting: bytes = b"220 ftp ready\r\n", seconds: float = 10.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(seconds)
        self.port = self.sock.getsockname()[1]
        self.connected = False
        self.received = b""
        self.greeting = greeting
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.sock.accept()
            self.connected = True
            with conn:
                conn.settimeout(2)
                conn.sendall(self.greeting)
                with contextlib.suppress(OSError):
                    self.received += conn.recv(1024)

    def close(self) -> None:
        self.sock.close()
        self.thread.join(5)


class Trickle:
    """A loopback server that sends its answer one byte at a time, forever (bounded: `seconds`).

    `closed_after` is how long after the first byte the client hung up (None: it never did).
    """

    def __init__(self, part: str = "body", seconds: float = 30.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(seconds)
        self.port = self.sock.getsockname()[1]
        self.part, self.seconds = part, seconds
        self.hangups: list[float] = []
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True, name="trickle-accept")
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slow"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.connections += 1
                threading.Thread(target=self._trickle, args=(conn,), daemon=True, name="trickle").start()

    def _trickle(self, conn: socket.socket) -> None:
        start = time.monotonic()
        with conn, contextlib.suppress(OSError):
            conn.settimeout(2)
            conn.recv(4096)
            if self.part == "body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                unit = b"x"
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                unit = b"X-Slow: 1\r\n"
            while time.monotonic() - start < self.seconds:
                conn.sendall(unit)
                time.sleep(0.05)
            return
        self.hangups.append(time.monotonic() - start)

    def close(self) -> None:
        self.sock.close()


# Item 9: only http and https, on every hop.


async def test_a_redirect_to_ftp_is_not_followed(workspace: Path, net: Net, record_reliability: Record) -> None:
    ftp = Listener()
    try:
        route = {"/": (302, {"Location": f"ftp://127.0.0.1:{ftp.port}/pub/file"}, b"")}
        with http_server(route) as server:
            r = await fetch(config(ALLOW), f"http://127.0.0.1:{server.server_port}/", workspace)
        ftp.close()
        assert not ftp.connected, f"the ftp listener was reached; it was sent {ftp.received!r}"
        assert r.is_error and "only http:// and https://" in r.output and "redirect" in r.output, r.output
    finally:
        ftp.close()
    record_reliability(
        "attack: fetch redirected to ftp://",
        "a loopback page answers 302 Location: ftp://127.0.0.1:PORT/ (a TCP listener there)",
        "not followed: a tool failure naming the scheme; nothing connected to the listener",
    )


async def test_an_http_redirect_is_still_followed(workspace: Path, net: Net) -> None:
    route = {"/old": (301, {"Location": "/new?x=1"}, b""), "/new?x=1": (200, {"Content-Type": "text/plain"}, b"moved here")}
    with http_server(route) as server:
        r = await fetch(config(ALLOW), f"http://127.0.0.1:{server.server_port}/old", workspace)
        assert server.requests == ["/old", "/new?x=1"]
    assert not r.is_error and "moved here" in r.output and "Status: 200" in r.output, r.output


# Item 10: a fetch that times out lets go of everything; the read is bounded in time and size.


def others(before: set[threading.Thread]) -> list[str]:
    """Threads alive now that were not before, but for the test servers' own."""
    return [t.name for t in threading.enumerate() if t not in before and t.is_alive() and not t.name.startswith("trickle")]


async def until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return condition()


@pytest.mark.parametrize("part", ["body", "headers"])
async def test_a_trickling_page_times_out_and_lets_go(workspace: Path, net: Net, part: str, record_reliability: Record) -> None:
    slow = Trickle(part)
    before = set(threading.enumerate())
    try:
        start = time.monotonic()
        r = await fetch(config("tool_timeout_secs = 1\n" + ALLOW), slow.url, workspace)
        took = time.monotonic() - start
        assert r.is_error and "timed out" in r.output, r.output
        assert took < 5, took
        assert await until(lambda: bool(slow.hangups), 3), "the page was still being read after the fetch timed out"
        assert await until(lambda: not others(before), 3), f"threads left behind: {others(before)}"
    finally:
        slow.close()
    record_reliability(
        f"attack: a page that trickles its {part} forever",
        "one byte every 50 ms from a loopback server, tool_timeout_secs = 1",
        "the fetch fails as timed out at its deadline; its connection is closed, no thread left reading",
    )


async def test_timed_out_fetches_do_not_use_up_the_worker_threads(workspace: Path, net: Net) -> None:
    # Over LSP every later turn hung once more fetches had timed out than the loop had worker threads.
    workers = 2
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=workers)
    loop.set_default_executor(pool)
    slow = Trickle()
    try:
        cfg = config("tool_timeout_secs = 1\n" + ALLOW)
        results = await asyncio.gather(*(fetch(cfg, slow.url, workspace) for _ in range(workers + 1)))
        assert all(r.is_error and "timed out" in r.output for r in results), [r.output for r in results]
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 3) == "free"
        assert await until(lambda: len(slow.hangups) == workers + 1, 3), slow.hangups
    finally:
        slow.close()


async def test_an_endless_body_is_cut_at_the_size_limit(workspace: Path, net: Net) -> None:
    fast = Listener(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"y" * 200_000)
    try:
        r = await fetch(config("max_fetch_chars = 1000\n" + ALLOW), f"http://127.0.0.1:{fast.port}/", workspace)
    finally:
        fast.close()
    assert not r.is_error and "(cut at 1000 characters)" in r.output and "y" * 1000 in r.output, r.output[:300]


def test_forge_lsp_run_exits_after_a_fetch_times_out(workspace: Path, record_reliability: Record) -> None:
    slow = Trickle()
    try:
        user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "config.toml"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text("tool_timeout_secs = 1\n[retry]\nmin_delay_ms = 1\n" + ALLOW)
        script = {"responses": [{"tool_calls": [{"name": "fetch", "arguments": {"url": slow.url}}]}, {"text": "gave up"}]}
        (workspace / "fetch.json").write_text(json.dumps(script))
        cmd = [*forkserver.command(), "run", "read the page", "-w", str(workspace), "--model", "scripted/fetch.json"]
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=20)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"forge-lsp run did not exit 20 s after its fetch timed out: {exc.stderr!r}")
        assert time.monotonic() - start < 20
        assert p.returncode == 0, p.stderr
        assert "timed out" in p.stdout + p.stderr and "gave up" in p.stdout, (p.stdout, p.stderr)
    finally:
        slow.close()
    record_reliability(
        "attack: forge-lsp run fetching a page that never ends",
        "a scripted turn fetches a loopback page trickling a byte every 50 ms, tool_timeout_secs = 1",
        "the fetch timed out, the turn completed and the process exited 0 within 20 s",
    )


# Item 11: this machine, link-local, private networks and metadata services are refused after resolution.


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f.1", "localhost", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0"])
async def test_fetch_refuses_this_machine(workspace: Path, net: Net, host: str, record_reliability: Record) -> None:
    if host == "[::1]" and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    with http_server(host="::1" if host == "[::1]" else "127.0.0.1") as server:
        r = await fetch(config(), f"http://{host}:{server.server_port}/secret", workspace)
        assert server.requests == [], f"{host} was reached"
    assert net.refused == [], "a connection was tried"
    assert r.is_error and "allow_private_networks = true" in r.output, r.output
    record_reliability(
        f"attack: fetch of http://{host}:PORT/",
        "the model fetches a server on this machine (a loopback test server)",
        "refused after resolution, before any connection; the failure says how to allow it",
    )


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "168.63.129.16", "10.1.2.3", "172.16.0.1", "192.168.1.1",
     "fe80::1", "fc00::1", "224.0.0.1", "240.0.0.1", "100.64.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe"],
)  # fmt: skip
async def test_fetch_refuses_private_and_metadata_addresses(
    workspace: Path, net: Net, address: str, record_reliability: Record
) -> None:
    net.names["inside.example"] = [address]
    for url in ("http://inside.example/latest/meta-data/", f"http://{'[' + address + ']' if ':' in address else address}/x"):
        r = await fetch(config(), url, workspace)
        assert r.is_error and "allow_private_networks = true" in r.output, r.output
    assert net.refused == [], "a connection was tried"
    record_reliability(
        f"attack: fetch of a {address} address",
        "the URL names it, or a name that resolves to it (stub resolver)",
        "refused after resolution, before any connection",
    )


async def test_a_redirect_to_this_machine_is_refused(workspace: Path, net: Net, record_reliability: Record) -> None:
    with http_server() as inside:
        route = {"/": (302, {"Location": f"http://127.0.0.1:{inside.server_port}/admin"}, b"")}
        with http_server(route) as outside:
            net.routes[PUBLIC] = outside.server_port  # a public page, as far as fetch can tell
            r = await fetch(config(), f"http://{PUBLIC}:{outside.server_port}/", workspace)
            assert outside.requests == ["/"]
        assert inside.requests == [], "the redirect reached this machine"
    assert r.is_error and "allow_private_networks = true" in r.output, r.output
    record_reliability(
        "attack: a public page redirecting fetch to this machine",
        "302 Location: http://127.0.0.1:PORT/admin (the public page a loopback server)",
        "refused at the redirect, before any connection to it",
    )


async def test_a_name_that_rebinds_to_this_machine_is_not_reached(workspace: Path, net: Net) -> None:
    # DNS rebinding: the first answer passes the check, a later one points at this machine.
    with http_server() as inside:
        net.answers["rebind.example"] = [["8.8.8.8"], ["127.0.0.1"]]
        r = await fetch(config(), f"http://rebind.example:{inside.server_port}/", workspace)
        assert inside.requests == []
    assert r.is_error
    assert [a[0] for a in net.refused] == ["8.8.8.8"], "fetch connected somewhere other than the address it checked"


async def test_allow_private_networks_lets_fetch_reach_this_machine(workspace: Path, net: Net) -> None:
    with http_server() as server:
        r = await fetch(config(ALLOW), f"http://localhost:{server.server_port}/", workspace)
        assert not r.is_error and "hello" in r.output, r.output
        assert server.requests == ["/"]


@pytest.mark.parametrize(
    ("shape", "page"),
    [("unclosed <script> tags", b"<script>" * 25_000), ("a run of <", b"<" * 200_000)],
    ids=["scripts", "angles"],
)
async def test_a_page_made_to_backtrack_does_not_hold_the_event_loop(
    workspace: Path, net: Net, shape: str, page: bytes, record_reliability: Record
) -> None:
    # 200 KB (what fetch reads for the default max_fetch_chars) of HTML whose markup stripping went quadratic, on
    # the event loop: a page the model is told to read (a link in a README) froze the server for a minute.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(page)
    listener = Listener(head + page)
    started = time.monotonic()
    try:
        r = await fetch(config(ALLOW), f"http://127.0.0.1:{listener.port}/", workspace)
    finally:
        listener.close()
    took = time.monotonic() - started
    assert not r.is_error, r.output
    assert took < 5, f"the fetch took {took:.1f} s"
    record_reliability(
        f"attack: a fetched page of {shape}",
        "200 KB of HTML made to make the markup stripping backtrack, fetched by the agent",
        f"stripped in one pass: the fetch done in {took:.1f} s (it held the event loop for a minute)",
    )
