"""Layered configuration: defaults < user < editor < workspace, with the source of every value.

Every layer has the same schema (domain.config). A layer with an unknown key
or a bad value is reported with its file and line, and the last good version
of that layer stays in force.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import WORKSPACE_FILE, ForgeConfig, build, default_values, validate

__all__ = ["WORKSPACE_FILE", "ConfigLoader", "ConfigProblem", "EffectiveConfig"]
LAYERS = ("default", "user", "editor", "workspace")
# Settings that only the editor client uses (how to start the server); not config keys.
CLIENT_ONLY = frozenset({"server_path", "python_path", "server_args", "trace", "server_env"})


@dataclass(frozen=True)
class ConfigProblem:
    """One problem in one layer: the key, why, and where (file and 1-based line)."""

    layer: str
    key: str
    message: str
    path: Path | None = None
    line: int | None = None

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

    def show(self) -> dict[str, dict[str, Any]]:
        """{key: {value, source}} for forge.showConfig."""
        return {
            k: {"value": list(v) if isinstance(v, tuple) else v, "source": self.sources[k]}
            for k, v in sorted(self.values.items())
        }


def user_config_path() -> Path:
    """~/.config/forge-lsp/config.toml, or $FORGE_LSP_CONFIG, honouring XDG_CONFIG_HOME."""
    if env := os.environ.get("FORGE_LSP_CONFIG"):
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "forge-lsp" / "config.toml"


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_keys(value: Any) -> Any:
    """Editor settings arrive camelCase (maxToolFailurePerTurn); the schema is snake_case."""
    if isinstance(value, Mapping):
        return {_CAMEL.sub(r"_\1", str(k)).lower(): snake_keys(v) for k, v in value.items()}
    return value


_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _norm(key: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in key.split("."))


def key_line(text: str, dotted: str) -> int | None:
    """The 1-based line where a dotted key is set in TOML text (best effort)."""
    table = ""
    fallback = None
    last = dotted.rsplit(".", 1)[-1]
    for n, line in enumerate(text.splitlines(), 1):
        if m := _HEADER.match(line):
            table = _norm(m.group(1))
            if table == dotted:
                return n
            continue
        if m := _ASSIGN.match(line):
            key = _norm(m.group(1))
            full = f"{table}.{key}" if table else key
            if full == dotted or dotted.startswith(full + "."):
                return n
            if fallback is None and key.rsplit(".", 1)[-1] == last:
                fallback = n
    return fallback


def _syntax_line(exc: tomllib.TOMLDecodeError, text: str) -> int:
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else max(1, len(text.splitlines()))


class ConfigLoader:
    """Reads and merges the layers of one workspace; remembers each layer's last good values."""

    def __init__(self, root: Path, user_path: Path | None = None) -> None:
        self.root = root
        self.user_path = user_path or user_config_path()
        self.editor: dict[str, Any] = {}
        self._last_good: dict[str, dict[str, Any]] = {}

    @property
    def workspace_path(self) -> Path:
        """The workspace's .forge.toml."""
        return self.root / WORKSPACE_FILE

    def set_editor(self, settings: Any) -> None:
        """Editor settings (initializationOptions or workspace/configuration "forge")."""
        self.editor = dict(snake_keys(settings)) if isinstance(settings, Mapping) else {}

    def _file_layer(self, layer: str, path: Path, problems: list[ConfigProblem]) -> dict[str, Any] | None:
        try:
            # Bytes, as tomllib.load wants them: text mode would turn a bare CR into a newline.
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(ConfigProblem(layer, "", f"cannot read: {exc}", path))
            return None
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(ConfigProblem(layer, "", f"invalid TOML: {exc}", path, _syntax_line(exc, text)))
            return None
        good, issues = validate(table)
        for issue in issues:
            problems.append(ConfigProblem(layer, issue.key, issue.message, path, key_line(text, issue.key)))
        return None if issues else good

    def _editor_layer(self, problems: list[ConfigProblem]) -> dict[str, Any] | None:
        settings = {k: v for k, v in self.editor.items() if k not in CLIENT_ONLY and v is not None}
        good, issues = validate(settings)
        for issue in issues:
            problems.append(ConfigProblem("editor", issue.key, issue.message))
        return None if issues else good

    def load(self) -> EffectiveConfig:
        """Merge every layer; a layer with problems keeps its last good values."""
        problems: list[ConfigProblem] = []
        layers = {
            "user": self._file_layer("user", self.user_path, problems),
            "editor": self._editor_layer(problems),
            "workspace": self._file_layer("workspace", self.workspace_path, problems),
        }
        values = default_values()
        sources = dict.fromkeys(values, "default")
        for name, layer in layers.items():
            if layer is None:
                layer = self._last_good.get(name, {})
            else:
                self._last_good[name] = layer
            for key, value in layer.items():
                values[key] = value
                sources[key] = name
        return EffectiveConfig(build(values), values, sources, problems)
