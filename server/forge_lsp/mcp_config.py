"""Where MCP servers come from: the user's mcp.json, the editor's settings, a trusted workspace's .mcp.json.

One shape everywhere (Forge's, Claude Code's): {"mcpServers": {NAME: {command, args, env, cwd} |
{url, headers, type}}}; a later source wins per name (user < editor < workspace); an entry may
say "disabled": true. ${NAME} (or ${NAME:-default}) in env, headers, args and url expands from
the environment, and what it expands to is a secret to the redactor. An untrusted workspace's
.mcp.json starts nothing: each of its entries is reported like an ignored key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_lsp.config import UNTRUSTED, ConfigProblem
from forge_lsp.redact import redact
from forge_lsp.textfile import Unusable, read_text

WORKSPACE_MCP_FILE = ".mcp.json"
USER_MCP_FILE = "mcp.json"
MAX_MCP_FILE_BYTES = 1024 * 1024
SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""What a server's name may be (it becomes part of its tools' names, and is shown in lists)."""
TRANSPORTS = ("stdio", "http", "sse")
"""stdio: a process; http: streamable HTTP; sse: the legacy HTTP+SSE transport."""
_TYPE_ALIASES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamable_http": "http", "sse": "sse"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
NOT_SECRET = frozenset({"HOME", "USER", "LOGNAME", "PWD", "PATH", "SHELL", "TMPDIR", "LANG"})
"""Variables whose values are not secrets when an entry expands them (a home folder in args)."""
UNTRUSTED_REASON = "a workspace's MCP server can run any program and send data anywhere"
KNOWN_FIELDS = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "disabled", "transport", "timeout"})


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server as configured: how to reach it, and where it was set."""

    name: str
    source: str
    """"user", "editor", "workspace" or "session" (ACP's session/new)."""
    transport: str = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    disabled: bool = False
    error: str | None = None
    """Why it cannot start as configured (a ${NAME} that is not set); it is then failed, with this reason."""
    path: Path | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    secrets: tuple[str, ...] = field(default=(), compare=False)
    """What its ${NAME}s expanded to: redacted wherever they would show."""

    def identity(self) -> tuple[Any, ...]:
        """What starts the server: a change of any of it restarts the server."""
        return (self.transport, self.command, self.args, self.env, self.cwd, self.url, self.headers, self.disabled, self.error)

    def where(self) -> str:
        """Where the entry is set, for a message: FILE:LINE, or the source in words."""
        if self.path is not None:
            return f"{self.path}:{self.line}" if self.line else str(self.path)
        return {"editor": "editor settings", "session": "the client's session"}.get(self.source, self.source)


@dataclass
class McpSources:
    """The merged servers (later source wins per name) and every problem found in the sources."""

    servers: dict[str, ServerSpec] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)


def user_mcp_path(user_config: Path) -> Path:
    """The user's mcp.json: next to their config.toml (~/.config/forge-lsp/mcp.json)."""
    return user_config.parent / USER_MCP_FILE


def _expand(text: str, env: Mapping[str, str], secrets: list[str], missing: list[str]) -> str:
    def one(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = env.get(name)
        if value is None:
            if default is None:
                missing.append(name)
                return ""
            value = default
        elif name not in NOT_SECRET:
            secrets.append(value)
        return value

    return _VAR.sub(one, text)


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return value


def _table(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return value


def parse_entry(name: str, entry: Any, source: str, env: Mapping[str, str] | None = None) -> ServerSpec:
    """One mcpServers entry as a ServerSpec; ValueError says what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("an entry must be an object with a command or a url")
    env = os.environ if env is None else env
    unknown = sorted(set(entry) - KNOWN_FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; an entry has command, args, env, cwd | url, headers, type")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ValueError("disabled must be true or false")
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and (not isinstance(kind, str) or kind not in _TYPE_ALIASES):
        raise ValueError(f"type must be one of stdio, http, sse; got {kind!r}")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ValueError("an entry needs either a command (a local server) or a url (a remote one)")
    secrets: list[str] = []
    missing: list[str] = []
    if command is not None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError("command must be a non-empty string")
        if kind is not None and _TYPE_ALIASES[kind] != "stdio":
            raise ValueError(f"type {kind!r} needs a url, not a command")
        args = [_expand(a, env, secrets, missing) for a in _strings(entry.get("args", []), "args")]
        envs = {k: _expand(v, env, secrets, missing) for k, v in _table(entry.get("env", {}), "env").items()}
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError("cwd must be a string")
        for field_name in ("url", "headers"):
            if field_name in entry:
                raise ValueError(f"{field_name} belongs to a remote server (url), not to a command")
        error = f"{', '.join('${' + m + '}' for m in dict.fromkeys(missing))} is not set in the environment" if missing else None
        return ServerSpec(
            name, source, "stdio", command, tuple(args), tuple(sorted(envs.items())), cwd,
            disabled=disabled, error=error, secrets=tuple(secrets),
        )  # fmt: skip
    if not isinstance(url, str) or not url.strip():
        raise ValueError("url must be a non-empty string")
    for field_name in ("args", "env", "cwd"):
        if field_name in entry:
            raise ValueError(f"{field_name} belongs to a local server (command), not to a url")
    url = _expand(url, env, secrets, missing)
    headers = {k: _expand(v, env, secrets, missing) for k, v in _table(entry.get("headers", {}), "headers").items()}
    if not missing and not re.match(r"^https?://", url):
        shown = redact(url, sorted(secrets, key=len, reverse=True))  # the url as expanded: ${NAME}s hidden again
        raise ValueError(f"url must start with http:// or https://, got {shown[:80]!r}")
    transport = _TYPE_ALIASES[kind] if kind is not None else ("sse" if url.rstrip("/").endswith("/sse") else "http")
    if transport == "stdio":
        raise ValueError("type stdio needs a command, not a url")
    error = f"{', '.join('${' + m + '}' for m in dict.fromkeys(missing))} is not set in the environment" if missing else None
    return ServerSpec(
        name, source, transport, url=url, headers=tuple(sorted(headers.items())),
        disabled=disabled, error=error, secrets=tuple(secrets),
    )  # fmt: skip


_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[^"]+|"')
"""JSON text cut into strings and what lies between them: each character is looked at once (a search for each key
from the top took the square of the text's size, and a text of 30,000 entries a minute)."""


def _key_lines(text: str) -> dict[str, int]:
    """The 1-based line of each key's first appearance in JSON text (best effort), found in one pass."""
    lines: dict[str, int] = {}
    line = 1
    string: str | None = None
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token.startswith('"') and len(token) > 1:
            string = token
        else:
            if string is not None and token.lstrip().startswith(":"):
                try:
                    lines.setdefault(json.loads(string), line)
                except ValueError:
                    pass
            string = None
        line += token.count("\n")
    return lines


def _read(path: Path, layer: str, problems: list[ConfigProblem]) -> tuple[dict[str, Any], str] | None:
    """An mcp.json's mcpServers table and its text; None when there is none or it cannot be used (then reported)."""
    try:
        text = read_text(path, MAX_MCP_FILE_BYTES, inside=path.parent if layer == "workspace" else None)
    except Unusable as exc:
        problems.append(ConfigProblem(layer, "", f"{exc}; no MCP server from it starts", path))
        return None
    except OSError as exc:
        problems.append(ConfigProblem(layer, "", f"cannot read: {exc}; no MCP server from it starts", path))
        return None
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", None)
        problems.append(ConfigProblem(layer, "", f"invalid JSON: {exc}; no MCP server from it starts", path, line))
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        problems.append(ConfigProblem(layer, "", 'needs {"mcpServers": {NAME: {...}}}; no MCP server from it starts', path, 1))
        return None
    return servers, text


def _add(
    out: McpSources, layer: str, servers: Mapping[str, Any], path: Path | None, text: str, env: Mapping[str, str] | None
) -> None:
    lines = _key_lines(text) if text else {}
    for name, entry in servers.items():
        line = lines.get(name)
        key = f"mcpServers.{name}"
        if not SERVER_NAME.match(name):
            out.problems.append(
                ConfigProblem(layer, key, "a server name is 1 to 64 letters, digits, '_', '-' or '.'", path, line)
            )
            continue
        try:
            spec = parse_entry(name, entry, layer, env)
        except ValueError as exc:
            # The name is this source's even so (a later source wins per name): an earlier one does not start.
            out.servers.pop(name, None)
            out.problems.append(ConfigProblem(layer, key, f"{exc}; this server is not started", path, line))
            if layer == "session":  # no file to mark: the session's failed server, said in its chat
                out.servers[name] = ServerSpec(name, layer, error=str(exc))
            continue
        out.servers[name] = ServerSpec(**{**spec.__dict__, "path": path, "line": line})


def editor_servers(settings: Any) -> Mapping[str, Any] | None:
    """The mcpServers of the editor's settings (VS Code forge.mcpServers, Neovim's mcp_servers), as given."""
    if not isinstance(settings, Mapping):
        return None
    value = settings.get("mcpServers", settings.get("mcp_servers"))
    return value if isinstance(value, Mapping) else None


def load_servers(user_file: Path, editor: Any, root: Path, trusted: bool, env: Mapping[str, str] | None = None) -> McpSources:
    """Every source merged: user < editor < workspace (only when trusted), later wins per name."""
    out = McpSources()
    found = _read(user_file, "user", out.problems)
    if found is not None:
        _add(out, "user", found[0], user_file, found[1], env)
    servers = editor_servers(editor)
    if servers is not None:
        _add(out, "editor", servers, None, "", env)
    elif isinstance(editor, Mapping) and ("mcpServers" in editor or "mcp_servers" in editor):
        out.problems.append(
            ConfigProblem("editor", "mcpServers", "must be an object of servers by name; no server from it starts")
        )
    path = root / WORKSPACE_MCP_FILE
    if trusted:
        found = _read(path, "workspace", out.problems)
        if found is not None:
            _add(out, "workspace", found[0], path, found[1], env)
    elif os.path.lexists(path):
        ignored: list[ConfigProblem] = []
        found = _read(path, "workspace", ignored)
        names = list(found[0]) if found is not None else []
        message = f"ignored because this workspace is not trusted: {UNTRUSTED_REASON}"
        lines = _key_lines(found[1]) if found else {}
        for name in names:
            line = lines.get(name)
            out.problems.append(ConfigProblem("workspace", f"mcpServers.{name}", message, path, line, UNTRUSTED))
        if not names:
            out.problems.append(ConfigProblem("workspace", "", f"{WORKSPACE_MCP_FILE}: {message}", path, 1, UNTRUSTED))
    return out


def acp_servers(servers: Any, env: Mapping[str, str] | None = None) -> McpSources:
    """ACP's session/new mcpServers ([{name, command, args, env: [{name, value}]} | {type: http|sse, name, url,
    headers: [{name, value}]}]) as specs of source "session"."""
    out = McpSources()
    for item in servers if isinstance(servers, list) else []:
        if hasattr(item, "model_dump"):
            item = item.model_dump(by_alias=True, exclude_none=True)
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            out.problems.append(ConfigProblem("session", "mcpServers", "an entry without a name is skipped"))
            continue
        entry = {k: v for k, v in item.items() if k in ("command", "args", "url", "type", "cwd")}
        for pairs in ("env", "headers"):
            if isinstance(item.get(pairs), list):
                entry[pairs] = {p.get("name"): p.get("value") for p in item[pairs] if isinstance(p, dict)}
            elif isinstance(item.get(pairs), dict):
                entry[pairs] = item[pairs]
        _add(out, "session", {item["name"]: entry}, None, "", env)
    return out
