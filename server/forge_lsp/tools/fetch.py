"""fetch: an http(s) URL's content, as text.

The model chooses the URL, and a page it read may have chosen it for the model, so every hop is
checked: http and https only; the host is resolved here, and every address it resolves to must be
on the public internet (not this machine, link-local, a private network, multicast/reserved or a
cloud metadata service) unless the user set [tools.fetch] allow_private_networks = true; the
connection goes to the address that was checked (a second DNS answer never matters). The whole
fetch (resolution, redirects, headers and body) runs under one deadline on the event loop itself,
so a page that trickles forever ends with the deadline and leaves no thread behind reading it.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import ipaddress
import re
import socket
import ssl
import threading
import zlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import SplitResult, quote, urljoin, urlsplit

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, boolean, obj, string

_HIDDEN = ("script", "style")
"""Elements whose content is no text of the page: left out with their tags."""
_BLANK = re.compile(r"\n\s*\n+")

SCHEMES = {"http": 80, "https": 443}
MAX_REDIRECTS = 5
MAX_SECONDS = 60
"""The longest one fetch may take, redirects included (tool_timeout_secs when that is shorter)."""
MAX_HEADER_BYTES = 64 * 1024
MAX_HEADERS = 100
REDIRECTS = (301, 302, 303, 307, 308)
ALLOW_HINT = (
    "fetch reaches only public internet addresses; to let it reach this machine and your local networks, "
    "set [tools.fetch] allow_private_networks = true in your user config (~/.config/forge-lsp/config.toml) "
    "or a trusted workspace's .forge.toml"
)
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "168.63.129.16", "192.0.0.192")
)
"""Cloud metadata and platform services (AWS, GCP, Azure, Alibaba, Oracle): refused like a private address."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
T = TypeVar("T")


def html_to_text(source: str) -> str:
    """The text of an HTML page: scripts, styles and tags left out, entities decoded, blank runs squeezed.

    One pass over the page, each character looked at a bounded number of times: the patterns it replaced
    (``<(script|style)\\b.*?</\\1>``, ``<[^>]+>``) went quadratic on an unclosed <script> repeated or a run of
    "<", and held the event loop for a minute on 200 KB a page can hold."""
    lower = source.lower()
    out: list[str] = []
    unclosed: set[str] = set()  # hidden elements with no closing tag after some point: never searched for again
    i, n = 0, len(source)
    while i < n:
        lt = source.find("<", i)
        if lt < 0:
            out.append(source[i:])
            break
        out.append(source[i:lt])
        gt = source.find(">", lt + 1)
        if gt < 0:  # no tag closes: the rest is text, as the pattern left it
            out.append(source[lt:])
            break
        if gt == lt + 1:  # "<>" is no tag
            out.append("<")
            i = lt + 1
            continue
        name = next((h for h in _HIDDEN if lower.startswith(h, lt + 1)), None)
        after = lt + 1 + len(name) if name else lt
        if name and not (after < n and (lower[after].isalnum() or lower[after] == "_")) and name not in unclosed:
            end = lower.find(f"</{name}>", gt + 1)
            if end >= 0:
                i = end + len(name) + 3
                continue
            unclosed.add(name)
        i = gt + 1
    return _BLANK.sub("\n\n", html.unescape("".join(out))).strip()


def address_problem(ip: IP) -> str | None:
    """What this address is when it is not a public one ("a loopback address (this machine)"), or None.

    An IPv6 address that carries an IPv4 one (mapped, 6to4, Teredo, NAT64) is judged by both.
    """
    inner: list[IP] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in (ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None):
            if embedded is not None:
                inner.append(embedded)
        if ip in _NAT64:
            inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    for a in inner:
        if a in METADATA:
            return "a cloud metadata service"
        for kind, what in _KINDS:
            if getattr(a, f"is_{kind}"):
                return what
        if not a.is_global:
            return "not a public internet address"
    return None


_KINDS = (
    ("loopback", "a loopback address (this machine)"),
    ("unspecified", "an unspecified address (this machine)"),
    ("link_local", "a link-local address"),
    ("multicast", "a multicast address"),
    ("private", "a private network address"),
    ("reserved", "a reserved address"),
)


def _in_daemon_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """fn(*args) in a thread of its own: a resolver that hangs never holds the loop's worker
    threads, and never keeps the process from exiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def work() -> None:
        try:
            result: Any = (True, fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting task
            result = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=work, name="forge-fetch-resolve", daemon=True).start()
    return future


def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def resolve(host: str, port: int) -> list[IP]:
    """The addresses of a host (an address literal is itself: no lookup)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        found = await _in_daemon_thread(_getaddrinfo, host, port)
    except (OSError, UnicodeError) as exc:
        raise ToolFailure(f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}") from None
    out: list[IP] = []
    for a in found:
        with contextlib.suppress(ValueError):
            out.append(ipaddress.ip_address(a.split("%", 1)[0]))
    if not out:
        raise ToolFailure(f"cannot resolve {host}: no address")
    return out


class _Target:
    """One hop: where to connect and what to ask for."""

    def __init__(self, url: str, hop: str) -> None:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES or not parts.hostname:
            where = f" (redirected from {hop})" if hop else ""
            raise ToolFailure(f"only http:// and https:// URLs can be fetched, on every redirect too, not {url!r}{where}")
        self.url, self.parts, self.https = url, parts, scheme == "https"
        try:
            self.port = parts.port or SCHEMES[scheme]
        except ValueError:
            raise ToolFailure(f"bad port in {url!r}") from None
        self.host = parts.hostname
        try:
            self.ascii_host = self.host if _is_ip(self.host) else self.host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ToolFailure(f"bad host name in {url!r}") from None

    def request(self) -> bytes:
        parts: SplitResult = self.parts
        path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
        if parts.query:
            path += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        if parts.port is not None:
            host += f":{self.port}"
        return (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: forge-lsp\r\nAccept: */*\r\n"
            "Accept-Encoding: identity\r\nConnection: close\r\n\r\n"
        ).encode("ascii")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _checked_addresses(target: _Target, allow_private: bool) -> list[IP]:
    addresses = await resolve(target.ascii_host, target.port)
    if not allow_private:
        for ip in addresses:
            kind = address_problem(ip)
            if kind is not None:
                what = f"{ip} is" if str(ip) == target.host else f"{target.host} is {ip},"
                raise ToolFailure(f"GET {target.url} refused: {what} {kind}. {ALLOW_HINT}")
    return addresses


async def _connect(target: _Target, addresses: list[IP]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to one of the checked addresses (never to the name: no second lookup)."""
    tls = ssl.create_default_context() if target.https else None
    problem: OSError | None = None
    for ip in addresses:
        try:
            return await asyncio.open_connection(
                str(ip), target.port, ssl=tls, server_hostname=target.ascii_host if tls else None, limit=MAX_HEADER_BYTES
            )
        except OSError as exc:
            problem = exc
    raise ToolFailure(f"GET {target.url} failed: {getattr(problem, 'strerror', None) or problem}")


async def _head(reader: asyncio.StreamReader, url: str) -> tuple[int, str, dict[str, str]]:
    """The status line and headers (1xx answers skipped), bounded in size and count."""
    used = 0

    async def line() -> str:
        nonlocal used
        try:
            raw = await reader.readline()
        except ValueError:  # a line longer than the reader's limit
            raise ToolFailure(f"GET {url} failed: a header line over {MAX_HEADER_BYTES} bytes") from None
        used += len(raw)
        if used > MAX_HEADER_BYTES:
            raise ToolFailure(f"GET {url} failed: headers over {MAX_HEADER_BYTES} bytes")
        if not raw.endswith(b"\n"):
            raise ToolFailure(f"GET {url} failed: the connection closed in the headers")
        return raw.decode("latin-1").rstrip("\r\n")

    while True:
        status_line = await line()
        m = re.fullmatch(r"HTTP/\d(?:\.\d)? +(\d{3})(?: +(.*))?", status_line)
        if not m:
            raise ToolFailure(f"GET {url} failed: not an HTTP answer ({status_line[:80]!r})")
        headers: dict[str, str] = {}
        while (text := await line()) != "":
            if len(headers) >= MAX_HEADERS:
                raise ToolFailure(f"GET {url} failed: more than {MAX_HEADERS} headers")
            name, _, value = text.partition(":")
            headers.setdefault(name.strip().lower(), value.strip())
        status = int(m[1])
        if status >= 200 or status == 101:
            return status, m[2] or "", headers


async def _body(reader: asyncio.StreamReader, headers: Mapping[str, str], limit: int) -> bytes:
    """At most limit bytes of the body (the rest is never read)."""
    out = bytearray()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while len(out) < limit:
            size_line = await reader.readline()
            try:
                size = int(size_line.split(b";", 1)[0].strip() or b"x", 16)
            except ValueError:
                break
            if size == 0:
                break
            want = min(size, limit - len(out))
            out += await reader.readexactly(want)
            if want < size:
                break
            await reader.readline()  # the CRLF after the chunk
        return bytes(out)
    length = headers.get("content-length", "")
    remaining = int(length) if length.isdigit() else None
    while len(out) < limit and (remaining is None or remaining > 0):
        chunk = await reader.read(min(65536, limit - len(out), remaining if remaining is not None else 65536))
        if not chunk:
            break
        out += chunk
        if remaining is not None:
            remaining -= len(chunk)
    return bytes(out)


def _decode(body: bytes, encoding: str, limit: int, url: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:  # bounded: a small bomb never becomes a big buffer
            return zlib.decompressobj(47 if encoding != "deflate" else 15).decompress(body, limit)
        except zlib.error:
            with contextlib.suppress(zlib.error):
                return zlib.decompressobj(-15).decompress(body, limit)
            raise ToolFailure(f"GET {url} failed: its {encoding} body does not decompress") from None
    raise ToolFailure(f"GET {url} failed: unsupported Content-Encoding {encoding!r}")


def _close(writer: asyncio.StreamWriter) -> None:
    writer.transport.abort()  # at once, even mid-TLS: nothing is left open or read


async def _get(url: str, limit: int, allow_private: bool) -> tuple[str, int, str, bytes]:
    hop = ""
    for _ in range(MAX_REDIRECTS + 1):
        target = _Target(url, hop)
        addresses = await _checked_addresses(target, allow_private)
        reader, writer = await _connect(target, addresses)
        try:
            writer.write(target.request())
            status, reason, headers = await _head(reader, url)
            location = headers.get("location")
            if status in REDIRECTS and location:
                hop, url = url, urljoin(url, location.strip())
                continue
            if status >= 400:
                raise ToolFailure(f"GET {url} answered HTTP {status} {reason}".rstrip())
            body = await _body(reader, headers, limit)
            return url, status, headers.get("content-type", ""), _decode(body, headers.get("content-encoding", ""), limit, url)
        finally:
            _close(writer)
    raise ToolFailure(f"GET {url} failed: more than {MAX_REDIRECTS} redirects")


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Fetch a URL; HTML becomes text unless raw is true."""
    url = str(args["url"]).strip()
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.netloc:
        raise ToolFailure(f"only http:// and https:// URLs can be fetched, not {url!r}")
    limit = ctx.config.max_fetch_chars
    allow_private = ctx.config.fetch.allow_private_networks
    seconds = min(ctx.config.tool_timeout_secs, MAX_SECONDS)
    try:
        async with asyncio.timeout(seconds):
            final, status, ctype, body = await _get(url, limit * 4 + 1, allow_private)
    except TimeoutError:
        raise ToolFailure(f"GET {url} timed out after {seconds} s (the whole fetch, redirects included)") from None
    except ssl.SSLError as exc:
        raise ToolFailure(f"GET {url} failed: TLS: {exc.reason or exc}") from None
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        raise ToolFailure(f"GET {url} failed: the connection closed early ({exc})") from None
    except OSError as exc:
        raise ToolFailure(f"GET {url} failed: {exc.strerror or exc}") from None
    text = body.decode("utf-8", errors="replace")
    if "html" in ctype and not args.get("raw"):
        text = html_to_text(text)
    note = f"\n(cut at {limit} characters)" if len(text) > limit else ""
    shown = url if final == url else f"{final} (redirected from {url})"
    return ToolOutput(f"URL: {shown}\nStatus: {status}\nContent-Type: {ctype}\n\n{text[:limit]}{note}")


TOOL = Implementation(
    description="Fetch an http or https URL and return its content (HTML converted to text unless raw).",
    parameters=obj({"url": string("The http(s) URL."), "raw": boolean("Return the body as it is.")}, ["url"]),
    run=run,
)
