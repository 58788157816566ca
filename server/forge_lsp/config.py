"""Layered configuration: defaults < user < editor < workspace, with the source of every value.

Every layer has the same schema (domain.config). Each unknown key or bad
value is dropped alone and reported with its file and line; the rest of the
layer applies. A file that does not parse keeps that layer's last good values.
In an untrusted workspace the workspace file's keys that need trust, and
limits looser than the user's, are ignored (and reported); deny and confirm lists are merged across layers.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import (
    HOOKS_RUN,
    MAX_DEPTH,
    UNION_KEYS,
    WORKSPACE_FILE,
    ForgeConfig,
    build,
    default_values,
    limit_baseline,
    looser_than,
    spec_of,
    trust_reason,
    validate,
)
from forge_lsp.domain.hooks import Hook
from forge_lsp.hooks_config import take_hooks
from forge_lsp.textfile import Unusable, read_text

__all__ = ["UNTRUSTED", "WORKSPACE_FILE", "ConfigLoader", "ConfigProblem", "EffectiveConfig"]
LAYERS = ("default", "user", "editor", "workspace")
# Settings that only the editor client uses (how to start the server), and client facts
# (workspaceTrusted, from VS Code's workspace.isTrusted): never config keys.
CLIENT_ONLY = frozenset({"server_path", "python_path", "server_args", "trace", "server_env", "workspace_trusted", "mcp_servers"})
"""(mcp_servers: MCP servers are read from the raw settings by mcp_config, not as config keys.)"""
MAX_CONFIG_BYTES = 1024 * 1024
UNTRUSTED = "untrusted"
"""ConfigProblem.code of a workspace key ignored because the workspace is not trusted."""


@dataclass(frozen=True)
class ConfigProblem:
    """One problem in one layer: the key, why, and where (file and 1-based line)."""

    layer: str
    key: str
    message: str
    path: Path | None = None
    line: int | None = None
    code: str = "config"
    """"config" for a bad key, value or file; UNTRUSTED for a key ignored in an untrusted workspace."""

    def __str__(self) -> str:
        where = (
            f"{self.path}:{self.line}: "
            if self.path and self.line
            else f"{self.path}: "
            if self.path
            else f"{self.layer} settings: "
        )
        return f"{where}{self.key}: {self.message}" if self.key else f"{where}{self.message}"


@dataclass(frozen=True)
class EffectiveConfig:
    """The merged config, every dotted value with its source, and the problems found."""

    config: ForgeConfig
    values: dict[str, Any]
    sources: dict[str, str]
    problems: list[ConfigProblem] = field(default_factory=list)
    trusted: bool = False

    @property
    def ignored(self) -> list[ConfigProblem]:
        """The workspace keys ignored because the workspace is not trusted."""
        return [p for p in self.problems if p.code == UNTRUSTED]

    def show(self) -> dict[str, dict[str, Any]]:
        """{key: {value, source}} for forge.showConfig (each hook with its own source, file and line)."""
        return {
            k: {"value": [_shown(x) for x in v] if isinstance(v, tuple) else v, "source": self.sources[k]}
            for k, v in sorted(self.values.items())
        }


def _shown(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Hook) else value


def user_config_path() -> Path:
    """~/.config/forge-lsp/config.toml, or $FORGE_LSP_CONFIG, honouring XDG_CONFIG_HOME."""
    if env := os.environ.get("FORGE_LSP_CONFIG"):
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "forge-lsp" / "config.toml"


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_keys(value: Any, depth: int = 0) -> Any:
    """Editor settings arrive camelCase (maxToolFailurePerTurn); the schema is snake_case.

    Tables deeper than the schema's MAX_DEPTH are left as they are (validate refuses them).
    """
    if isinstance(value, Mapping) and depth < MAX_DEPTH:
        return {snake_key(k): snake_keys(v, depth + 1) for k, v in value.items()}
    return value


def snake_key(key: Any) -> str:
    """maxToolFailurePerTurn -> max_tool_failure_per_turn (a snake_case key stays as it is)."""
    return _CAMEL.sub(r"_\1", str(key)).lower()


_SUGGESTED = re.compile(r"\(did you mean ([\w.]+)\?\)")


def camel_key(key: str) -> str:
    """max_tool_failure_per_turn -> maxToolFailurePerTurn, part by part of a dotted key."""
    return ".".join(re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), part) for part in key.split("."))


# Each part of these two takes characters no neighbour takes, so no line (a multi-line string may hold any) makes
# them backtrack: "[" and 20,000 spaces took hours with the lazy groups and optional spaces they had.
_HEADER = re.compile(r"^\s*\[+([^\[\]]+)\]+\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"'][A-Za-z0-9_\-.\"' ]*)=")


def _norm(key: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in key.split("."))


class KeyLines:
    """Where each dotted key is set in TOML text (best effort), indexed in one pass.

    Lookups cost a few dict probes, so reporting thousands of bad keys stays linear.
    """

    def __init__(self, text: str) -> None:
        self.headers: dict[str, int] = {}
        self.within: dict[str, int] = {}
        self.assigns: dict[str, int] = {}
        self.by_last: dict[str, int] = {}
        table = ""
        for n, line in enumerate(text.splitlines(), 1):
            if m := _HEADER.match(line):
                table = _norm(m.group(1).strip())
                self.headers.setdefault(table, n)
                parts = table.split(".", MAX_DEPTH + 1)[: MAX_DEPTH + 1]
                for i in range(1, len(parts)):  # a table too deep to walk is reported at its header
                    self.within.setdefault(".".join(parts[:i]), n)
                continue
            if m := _ASSIGN.match(line):
                key = _norm(m.group(1).rstrip())
                self.assigns.setdefault(f"{table}.{key}" if table else key, n)
                self.by_last.setdefault(key.rsplit(".", 1)[-1], n)

    def line(self, dotted: str) -> int | None:
        """The first line setting dotted: its table header, its assignment, or an inline table holding it."""
        parts = dotted.split(".")
        found = [n for i in range(1, len(parts) + 1) if (n := self.assigns.get(".".join(parts[:i]))) is not None]
        if (n := self.headers.get(dotted)) is not None:
            found.append(n)
        if found:
            return min(found)
        return self.by_last.get(parts[-1]) or self.within.get(dotted)


def key_line(text: str, dotted: str) -> int | None:
    """The 1-based line where a dotted key is set in TOML text (best effort)."""
    return KeyLines(text).line(dotted)


def _syntax_line(exc: tomllib.TOMLDecodeError, text: str) -> int:
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else max(1, len(text.splitlines()))


_NESTING = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}\n]', re.S)


def deepest_line(text: str) -> int:
    """The line where arrays and inline tables nest deepest (strings and comments skipped)."""
    depth = best = 0
    line = best_line = 1
    for m in _NESTING.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > best:
                best, best_line = depth, line
        elif token in "]}":
            depth -= 1
        else:
            line += token.count("\n")
    return best_line


class ConfigLoader:
    """Reads and merges the layers of one workspace; remembers each layer's last good values."""

    def __init__(self, root: Path, user_path: Path | None = None) -> None:
        self.root = root
        self.user_path = user_path or user_config_path()
        self.user_path_named = user_path is None and bool(os.environ.get("FORGE_LSP_CONFIG"))
        """The user file is the one FORGE_LSP_CONFIG names: its absence is a mistake to report, not a user without one."""
        self.editor: dict[str, Any] = {}
        self.editor_raw: Any = None
        """The editor's settings as given (mcpServers keeps its names and environment variables' case)."""
        self._last_good: dict[str, dict[str, Any]] = {}
        self._lines: dict[str, KeyLines] = {}
        self.last_good_trusted = False
        """Whether the workspace layer's last good values were read from a trusted workspace."""

    @property
    def workspace_path(self) -> Path:
        """The workspace's .forge.toml."""
        return self.root / WORKSPACE_FILE

    def set_editor(self, settings: Any) -> None:
        """Editor settings (initializationOptions or workspace/configuration "forge")."""
        self.editor_raw = settings
        self.editor = dict(snake_keys(settings)) if isinstance(settings, Mapping) else {}

    def _file_layer(self, layer: str, path: Path, problems: list[ConfigProblem]) -> dict[str, Any] | None:
        """The layer's good values, or None when the file cannot be used at all (then its last good applies).

        A file ignored as a whole says so, and what applies instead: its last good config, or (on a
        fresh start) nothing from it."""
        found: list[ConfigProblem] = []
        good = self._read_layer(layer, path, found)
        if good is None:
            if layer in self._last_good:
                then = f"{path.name} is ignored as a whole, so its last good version stays in force until it is fixed"
            else:
                then = f"{path.name} is ignored as a whole, so nothing in it applies until it is fixed"
            found = [replace(p, message=f"{p.message}; {then}") if not p.key else p for p in found]
        problems.extend(found)
        return good

    def workspace_parses(self) -> bool:
        """Whether the workspace's .forge.toml can be used now (missing counts: it sets nothing)."""
        return self._read_layer("workspace", self.workspace_path, []) is not None

    def _read_layer(self, layer: str, path: Path, problems: list[ConfigProblem]) -> dict[str, Any] | None:
        try:
            text = read_text(path, MAX_CONFIG_BYTES, inside=self.root if layer == "workspace" else None)
        except Unusable as exc:
            problems.append(ConfigProblem(layer, "", str(exc), path))
            return None
        except OSError as exc:
            problems.append(ConfigProblem(layer, "", f"cannot read: {exc}", path))
            return None
        if text is None:
            self._lines.pop(layer, None)
            if layer == "user" and self.user_path_named:
                problems.append(
                    ConfigProblem(layer, "", "does not exist (FORGE_LSP_CONFIG names it); no user config applies", path)
                )
            return {}
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(ConfigProblem(layer, "", f"invalid TOML: {exc}", path, _syntax_line(exc, text)))
            return None
        except RecursionError:  # tomllib recurses per nesting level: a crafted file exhausts the stack
            problems.append(
                ConfigProblem(layer, "", "invalid TOML: arrays or tables nested too deeply", path, deepest_line(text))
            )
            return None
        table, hooks, hook_problems = take_hooks(table, text, layer, path)
        good, issues = validate(table)
        lines = KeyLines(text)
        self._lines[layer] = lines
        for issue in issues:
            problems.append(ConfigProblem(layer, issue.key, issue.message, path, lines.line(issue.key)))
        problems.extend(ConfigProblem(layer, key, message, path, line) for key, message, line in hook_problems)
        if hooks is not None:
            good["hooks"] = hooks
        return good

    def _editor_layer(self, problems: list[ConfigProblem]) -> dict[str, Any]:
        settings = {k: v for k, v in self.editor.items() if k not in CLIENT_ONLY and v is not None}
        good, issues = validate(settings)
        for issue in issues:
            written = self._as_written(issue.key)
            message = issue.message
            if written != issue.key:  # camelCase settings: the fix in their words too
                message = _SUGGESTED.sub(lambda m: f"(did you mean {camel_key(m.group(1))}?)", message)
            problems.append(ConfigProblem("editor", written, message))
        return good

    def _as_written(self, key: str) -> str:
        """A dotted snake_case key of the editor layer as the settings spelled it (maxToolFailurePerTurns)."""
        raw, parts = self.editor_raw, []
        for part in key.split("."):
            name = next((str(k) for k in raw if snake_key(k) == part), None) if isinstance(raw, Mapping) else None
            if name is None:
                return key
            parts.append(name)
            raw = raw[name]
        return ".".join(parts)

    def _untrusted(self, layer: dict[str, Any], problems: list[ConfigProblem], baseline: Mapping[str, Any]) -> dict[str, Any]:
        """The workspace layer less what needs trust; each ignored key reported at its line.

        A limit applies only when it is no looser than the user's (baseline: default < user < editor).
        """
        kept: dict[str, Any] = {}
        lines = self._lines.get("workspace")
        for key, value in layer.items():
            reason = trust_reason(key, value)
            if reason is None and looser_than(key, value, limit_baseline(key, baseline)):
                kept_value = limit_baseline(key, baseline)
                reason = f"{value!r} would loosen your limit; {kept_value!r} is kept"
            if reason is None:
                kept[key] = value
                continue
            line = lines.line(key) if lines else None
            message = f"ignored because this workspace is not trusted: {reason}"
            if reason == HOOKS_RUN:  # each hook where it is: a diagnostic on every entry that will not run
                for hook in value:
                    said = f"{message}; this {hook.event} hook does not run"
                    problems.append(ConfigProblem("workspace", key, said, self.workspace_path, hook.line, code=UNTRUSTED))
                continue
            problems.append(ConfigProblem("workspace", key, message, self.workspace_path, line, code=UNTRUSTED))
        return kept

    def _tighter(self, layer: dict[str, Any], problems: list[ConfigProblem], baseline: Mapping[str, Any]) -> dict[str, Any]:
        """The workspace layer less the ranked keys (edit_review) it would loosen: trusted or not, those only tighten."""
        kept: dict[str, Any] = {}
        lines = self._lines.get("workspace")
        for key, value in layer.items():
            spec = spec_of(key)
            if spec is not None and spec.ranks and looser_than(key, value, baseline.get(key)):
                message = f"{value!r} would loosen your {baseline.get(key)!r}; a workspace may only tighten it"
                line = lines.line(key) if lines else None
                problems.append(ConfigProblem("workspace", key, message, self.workspace_path, line))
                continue
            kept[key] = value
        return kept

    def load(self, trusted: bool = False) -> EffectiveConfig:
        """Merge every layer; bad keys are dropped alone, an unreadable file keeps its last good values.

        Untrusted (the default), the workspace file may only set limits and a real provider's model.
        deny and confirm lists are the union of every layer's.
        """
        problems: list[ConfigProblem] = []
        layers = {
            "user": self._file_layer("user", self.user_path, problems),
            "editor": self._editor_layer(problems),
            "workspace": self._file_layer("workspace", self.workspace_path, problems),
        }
        values = default_values()
        sources = dict.fromkeys(values, "default")
        origins: dict[tuple[str, str], str] = {}
        for name, layer in layers.items():
            if layer is None:
                layer = self._last_good.get(name, {})
            else:
                self._last_good[name] = layer
                if name == "workspace":
                    self.last_good_trusted = trusted
            if name == "workspace":
                layer = self._tighter(layer, problems, values)
            if name == "workspace" and not trusted:
                layer = self._untrusted(layer, problems, values)
            for key, value in layer.items():
                if key in UNION_KEYS:
                    # A later layer adds rules, never removes one (a workspace's confirm = [] changes nothing).
                    where = self._where(name, key)
                    for rule in value:
                        origins.setdefault((key, rule), where)
                    value = tuple(dict.fromkeys((*values.get(key, ()), *value)))
                values[key] = value
                sources[key] = name
        # In the order a person reads them: file by file (user, editor, workspace), each from its top.
        problems.sort(key=lambda p: (LAYERS.index(p.layer) if p.layer in LAYERS else len(LAYERS), p.line or 0))
        config = replace(build(values), trusted=trusted, rule_origins=origins)
        return EffectiveConfig(config, values, sources, problems, trusted)

    def _where(self, layer: str, key: str) -> str:
        """Where a layer sets key: "FILE:LINE" (or FILE), or "editor settings"."""
        if layer == "editor":
            return "editor settings"
        path = self.user_path if layer == "user" else self.workspace_path
        lines = self._lines.get(layer)
        line = lines.line(key) if lines else None
        return f"{path}:{line}" if line else str(path)
