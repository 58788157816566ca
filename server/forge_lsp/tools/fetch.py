"""fetch: an http(s) URL's content, as text."""

from __future__ import annotations

import asyncio
import html
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from forge_lsp.tools.base import ToolContext, ToolDefinition, ToolFailure, ToolOutput, boolean, obj, string

_SCRIPT = re.compile(r"<(script|style)\b.*?</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_BLANK = re.compile(r"\n\s*\n+")


def html_to_text(source: str) -> str:
    """Markup stripped to readable text (scripts and styles dropped)."""
    text = _TAG.sub("", _SCRIPT.sub("", source))
    return _BLANK.sub("\n\n", html.unescape(text)).strip()


def _get(url: str, timeout: float, limit: int) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, headers={"User-Agent": "forge-lsp"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - scheme checked by the caller
        return resp.status, resp.headers.get("Content-Type", ""), resp.read(limit * 4 + 1)


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Fetch a URL; HTML becomes text unless raw is true."""
    url = str(args["url"]).strip()
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ToolFailure(f"only http:// and https:// URLs can be fetched, not {url!r}")
    limit = ctx.config.max_fetch_chars
    try:
        status, ctype, body = await asyncio.to_thread(_get, url, min(ctx.config.tool_timeout_secs, 60), limit)
    except urllib.error.HTTPError as exc:
        raise ToolFailure(f"GET {url} answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ToolFailure(f"GET {url} failed: {getattr(exc, 'reason', exc)}") from None
    text = body.decode("utf-8", errors="replace")
    if "html" in ctype and not args.get("raw"):
        text = html_to_text(text)
    note = f"\n(cut at {limit} characters)" if len(text) > limit else ""
    return ToolOutput(f"URL: {url}\nStatus: {status}\nContent-Type: {ctype}\n\n{text[:limit]}{note}")


TOOL = ToolDefinition(
    name="fetch",
    description="Fetch an http or https URL and return its content (HTML converted to text unless raw).",
    parameters=obj({"url": string("The http(s) URL."), "raw": boolean("Return the body as it is.")}, ["url"]),
    run=run,
)
