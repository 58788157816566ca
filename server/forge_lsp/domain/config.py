"""The configuration model: every field, its type, default and rule.

One schema serves every layer (defaults, user, editor, workspace). Values are
checked here, purely; reading files and finding line numbers is config.py's.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

WORKSPACE_FILE = ".forge.toml"
# Tables nest at most this deep in the schema ([tools.shell] deny is 3); deeper is refused, never recursed into.
MAX_DEPTH = 8
SANDBOXES = ("bwrap", "none")


@dataclass(frozen=True)
class RetryConfig:
    """Request-level retry of model calls (HTTP 429/5xx, timeouts, empty replies)."""

    max_attempts: int = 8
    min_delay_ms: int = 1000
    backoff_factor: float = 2.0
    max_delay_secs: float = 60.0
    status_codes: tuple[int, ...] = (408, 429, 500, 502, 503, 504, 520, 522, 524, 529)


@dataclass(frozen=True)
class ToolConfig:
    """Per-tool settings ([tools.<name>])."""

    max_failures: int | None = None


@dataclass(frozen=True)
class ShellConfig:
    """Settings of the shell tool ([tools.shell])."""

    max_failures: int | None = None
    fail_on_nonzero_exit: bool = True
    timeout_secs: int | None = None
    deny: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    sandbox: str | None = None
    """"bwrap" or "none"; None lets the shell tool decide (bwrap in an untrusted workspace when installed)."""
    network: bool = False
    allow_env: tuple[str, ...] = ()
    """Environment names the user allows the model to set in a shell call's env (e.g. PATH)."""


@dataclass(frozen=True)
class CompactConfig:
    """Forge's [compact]: when older messages are replaced by a summary in what the model is sent.

    Thresholds of 0 are off. Defaults are Forge's.
    """

    retention_window: int = 6
    """The most recent messages never summarized."""
    eviction_window: float = 0.2
    """The most of the context (a share of its tokens, 0.0 to 1.0) one compaction may summarize."""
    max_tokens: int = 2000
    """The most tokens one summary may take (its oldest parts are dropped first)."""
    token_threshold: int = 100000
    turn_threshold: int = 0
    message_threshold: int = 200
    on_turn_end: bool = False
    """Compact when the last message is the user's (each turn's start)."""


@dataclass(frozen=True)
class ForgeConfig:
    """Every effective setting of one workspace."""

    model: str | None = None
    """No silent default: a turn with no model set anywhere fails, saying where to set one."""
    api_base: str | None = None
    max_tool_failure_per_turn: int = 3
    max_requests_per_turn: int = 100
    tool_timeout_secs: int = 300
    request_timeout_secs: int = 300
    temperature: float | None = None
    max_tokens: int | None = None
    max_read_lines: int = 2000
    max_line_chars: int = 2000
    max_file_size_bytes: int = 10 * 1024 * 1024
    max_search_lines: int = 1000
    max_stdout_prefix_lines: int = 100
    max_stdout_suffix_lines: int = 100
    max_stdout_line_chars: int = 500
    max_fetch_chars: int = 50000
    trusted: bool = False
    """Whether the workspace is trusted (not a config key: the runtime sets it). Tools read it,
    e.g. the shell's sandbox default for an untrusted workspace."""
    retry: RetryConfig = field(default_factory=RetryConfig)
    compact: CompactConfig = field(default_factory=CompactConfig)
    shell: ShellConfig = field(default_factory=ShellConfig)
    tools: Mapping[str, ToolConfig] = field(default_factory=dict)

    def per_tool_limits(self) -> dict[str, int]:
        """The [tools.<name>] max_failures overrides, shell included."""
        limits = {n: t.max_failures for n, t in self.tools.items() if t.max_failures is not None}
        if self.shell.max_failures is not None:
            limits["shell"] = self.shell.max_failures
        return limits

    def shell_timeout(self) -> int:
        """Seconds a shell command may run."""
        return self.shell.timeout_secs if self.shell.timeout_secs is not None else self.tool_timeout_secs


Check = Callable[[Any], Any]
"""Returns the normalised value, or raises ValueError with a reason."""


def _int(minimum: int = 0) -> Check:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"expected an integer, got {_kind(v)}")
        if v < minimum:
            raise ValueError(f"must be >= {minimum}, got {v}")
        return v

    return check


def _float(minimum: float = 0.0) -> Check:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"expected a number, got {_kind(v)}")
        if v < minimum:
            raise ValueError(f"must be >= {minimum}, got {v}")
        return float(v)

    return check


def _fraction(v: Any) -> float:
    value: float = _float(0.0)(v)
    if value > 1.0:
        raise ValueError(f"must be between 0.0 and 1.0, got {v}")
    return value


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"expected a string, got {_kind(v)}")
    return v


def _model(v: Any) -> str:
    s = _str(v).strip()
    if not s:
        raise ValueError("must not be empty")
    return s


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"expected true or false, got {_kind(v)}")
    return v


def _str_list(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"expected a list of strings, got {_kind(v)}")
    return tuple(v)


def _sandbox(v: Any) -> str:
    s = _str(v)
    if s not in SANDBOXES:
        raise ValueError(f"expected one of {', '.join(map(repr, SANDBOXES))}, got {s!r}")
    return s


def _int_list(v: Any) -> tuple[int, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError(f"expected a list of integers, got {_kind(v)}")
    return tuple(v)


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(v), type(v).__name__
    ) + (f" ({v!r})" if isinstance(v, bool | int | float | str) else "")


# Dotted key -> check. [tools.<name>] keys are matched by TOOL_KEYS below.
TOP_KEYS: dict[str, Check] = {
    "model": _model,
    "api_base": _str,
    "max_tool_failure_per_turn": _int(0),
    "max_requests_per_turn": _int(1),
    "tool_timeout_secs": _int(1),
    "request_timeout_secs": _int(1),
    "temperature": _float(0.0),
    "max_tokens": _int(1),
    "max_read_lines": _int(1),
    "max_line_chars": _int(1),
    "max_file_size_bytes": _int(1),
    "max_search_lines": _int(1),
    "max_stdout_prefix_lines": _int(0),
    "max_stdout_suffix_lines": _int(0),
    "max_stdout_line_chars": _int(1),
    "max_fetch_chars": _int(1),
    "retry.max_attempts": _int(1),
    "retry.min_delay_ms": _int(0),
    "retry.backoff_factor": _float(1.0),
    "retry.max_delay_secs": _float(0.0),
    "retry.status_codes": _int_list,
    "compact.retention_window": _int(0),
    "compact.eviction_window": _fraction,
    "compact.max_tokens": _int(1),
    "compact.token_threshold": _int(0),
    "compact.turn_threshold": _int(0),
    "compact.message_threshold": _int(0),
    "compact.on_turn_end": _bool,
}
COMPACT_KEYS = (
    "retention_window",
    "eviction_window",
    "max_tokens",
    "token_threshold",
    "turn_threshold",
    "message_threshold",
    "on_turn_end",
)
TOOL_KEYS: dict[str, Check] = {"max_failures": _int(0)}
SHELL_KEYS: dict[str, Check] = {
    "max_failures": _int(0),
    "fail_on_nonzero_exit": _bool,
    "timeout_secs": _int(1),
    "deny": _str_list,
    "confirm": _str_list,
    "sandbox": _sandbox,
    "network": _bool,
    "allow_env": _str_list,
}
# Lists merged across layers (union): a later layer adds rules, never removes one.
UNION_KEYS = frozenset({"tools.shell.deny", "tools.shell.confirm"})
SECRET_KEYS = frozenset({"api_key", "apikey", "api-key"})


@dataclass(frozen=True)
class ConfigIssue:
    """One problem with one key of one layer."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables -> dotted keys ({"retry": {"max_attempts": 2}} -> "retry.max_attempts").

    A table nested deeper than MAX_DEPTH is not walked: it becomes one value (of kind "a table"),
    which check_key then refuses; walking iteratively means no depth can exhaust the stack.
    """
    out: dict[str, Any] = {}
    stack: list[tuple[str, Mapping[str, Any], int]] = [(prefix, table, 1)]
    while stack:
        base, current, depth = stack.pop()
        for k, v in current.items():
            key = f"{base}{k}"
            if isinstance(v, Mapping) and depth < MAX_DEPTH:
                stack.append((key + ".", v, depth + 1))
            else:
                out[key] = v
    return out


def check_key(key: str, value: Any) -> Any:
    """The normalised value of one dotted key; KeyError if unknown, ValueError if bad."""
    if key.rsplit(".", 1)[-1].lower() in SECRET_KEYS:
        raise ValueError("API keys are read from the environment only (e.g. OPENAI_API_KEY), never from config")
    if key in TOP_KEYS:
        return TOP_KEYS[key](value)
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "tools":
        keys = SHELL_KEYS if parts[1] == "shell" else TOOL_KEYS
        if parts[2] in keys:
            return keys[parts[2]](value)
    raise KeyError(key)


SUGGESTED_KEYS = 20
"""A layer's first unknown keys are told the known key they are closest to (a file of
thousands of bad keys is not worth a search each)."""


def unknown_key(key: str) -> str:
    """The problem of a key no schema has, with the known key it is closest to (a typo's fix)."""
    parts = key.split(".")
    known = list(TOP_KEYS) + [f"tools.shell.{k}" for k in SHELL_KEYS]
    if len(parts) == 3 and parts[0] == "tools":
        known += [f"tools.{parts[1]}.{k}" for k in TOOL_KEYS]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return f"unknown key (did you mean {close[0]}?)" if close else "unknown key"


def validate(table: Mapping[str, Any]) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """Check one layer key by key: its good values (dotted keys) and one issue per bad key.

    A bad key is dropped alone; every other key of the layer still applies.
    """
    good: dict[str, Any] = {}
    issues: list[ConfigIssue] = []
    suggested = 0
    for key, value in flatten(table).items():
        try:
            good[key] = check_key(key, value)
        except KeyError:
            deep = key.count(".") >= MAX_DEPTH - 1 and isinstance(value, Mapping)
            if deep:
                problem = f"tables nested more than {MAX_DEPTH} deep"
            else:
                suggested += 1
                problem = unknown_key(key) if suggested <= SUGGESTED_KEYS else "unknown key"
            issues.append(ConfigIssue(key, problem))
        except ValueError as exc:
            issues.append(ConfigIssue(key, str(exc)))
    return good, issues


# Keys a workspace file may set while the workspace is untrusted: limits and tuning only.
# Everything else (URLs, scripted models, shell rules, sandbox, anything new) needs trust:
# an allow-list, so a key added later is safe by default.
UNTRUSTED_SAFE_TOP = frozenset(
    {
        "max_tool_failure_per_turn",
        "max_requests_per_turn",
        "tool_timeout_secs",
        "request_timeout_secs",
        "temperature",
        "max_tokens",
        "max_read_lines",
        "max_line_chars",
        "max_file_size_bytes",
        "max_search_lines",
        "max_stdout_prefix_lines",
        "max_stdout_suffix_lines",
        "max_stdout_line_chars",
        "max_fetch_chars",
    }
)
UNTRUSTED_SAFE_SHELL = frozenset({"max_failures", "timeout_secs"})
SCRIPTED_PREFIX = "scripted/"


def trust_reason(key: str, value: Any) -> str | None:
    """Why a checked workspace value needs a trusted workspace, or None when it applies anyway."""
    if key == "model":
        if isinstance(value, str) and value.startswith(SCRIPTED_PREFIX):
            return "a scripted model from the workspace would let the repository choose the tool calls"
        return None
    if key in UNTRUSTED_SAFE_TOP or key.startswith(("retry.", "compact.")):
        return None
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "tools":
        if parts[1] != "shell" and parts[2] == "max_failures":
            return None
        if parts[1] == "shell" and parts[2] in UNTRUSTED_SAFE_SHELL:
            return None
        if parts[1] == "shell":
            return "shell rules and sandbox settings come only from a trusted workspace"
    if key == "api_base" or key.endswith(("_url", "_base", "url")):
        return "a workspace may not send your requests (and API key) to another address"
    return "this setting can run code or loosen your rules"


# Which direction loosens a numeric limit an untrusted workspace may set. An untrusted value
# applies only when it is no looser than what the user would otherwise have (user/editor
# config, else the default); keys in neither set (temperature, compact windows) loosen nothing.
LOOSER_WHEN_HIGHER = frozenset(
    {
        "max_tool_failure_per_turn",
        "max_requests_per_turn",
        "tool_timeout_secs",
        "request_timeout_secs",
        "max_tokens",
        "max_read_lines",
        "max_line_chars",
        "max_file_size_bytes",
        "max_search_lines",
        "max_stdout_prefix_lines",
        "max_stdout_suffix_lines",
        "max_stdout_line_chars",
        "max_fetch_chars",
        "retry.max_attempts",
        "compact.max_tokens",
        "compact.token_threshold",
        "compact.turn_threshold",
        "compact.message_threshold",
        "tools.shell.timeout_secs",
    }
)
"""Keys where a bigger number allows more (requests, failures, time, bytes, tokens sent)."""
LOOSER_WHEN_LOWER = frozenset({"retry.min_delay_ms", "retry.backoff_factor", "retry.max_delay_secs"})
"""Keys where a smaller number allows more (retries hammer the provider sooner)."""
ZERO_IS_OFF = frozenset({"compact.token_threshold", "compact.turn_threshold", "compact.message_threshold"})
"""Thresholds where 0 means never: the loosest value of all."""


def limit_direction(key: str) -> int:
    """+1 when a higher value loosens the key, -1 when a lower one does, 0 when neither."""
    if key in LOOSER_WHEN_HIGHER:
        return 1
    if key in LOOSER_WHEN_LOWER:
        return -1
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "tools" and parts[2] == "max_failures":
        return 1
    return 0


def limit_baseline(key: str, values: Mapping[str, Any]) -> Any:
    """What the key is in effect before the workspace layer (a per-tool limit falls back to the general one)."""
    value = values.get(key)
    if value is not None:
        return value
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "tools" and parts[2] == "max_failures":
        return values.get("max_tool_failure_per_turn")
    if key == "tools.shell.timeout_secs":
        return values.get("tool_timeout_secs")
    return None


def looser_than(key: str, value: Any, baseline: Any) -> bool:
    """Whether an untrusted workspace's value would loosen the user's baseline for this key."""
    direction = limit_direction(key)
    if direction == 0 or baseline is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    if key in ZERO_IS_OFF:
        inf = float("inf")
        value, baseline = (value or inf), (baseline or inf)
    return bool(value > baseline) if direction > 0 else bool(value < baseline)


def build(values: Mapping[str, Any]) -> ForgeConfig:
    """A ForgeConfig from checked dotted values (missing keys keep defaults)."""
    top = {k: v for k, v in values.items() if "." not in k}
    retry = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("retry.")}
    compact = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("compact.")}
    shell = {k.split(".", 2)[2]: v for k, v in values.items() if k.startswith("tools.shell.")}
    tools: dict[str, dict[str, Any]] = {}
    for k, v in values.items():
        parts = k.split(".")
        if parts[0] == "tools" and parts[1] != "shell":
            tools.setdefault(parts[1], {})[parts[2]] = v
    return ForgeConfig(
        **top,
        retry=RetryConfig(**retry),
        compact=CompactConfig(**compact),
        shell=ShellConfig(**shell),
        tools={n: ToolConfig(**t) for n, t in tools.items()},
    )


def default_values() -> dict[str, Any]:
    """Every known dotted key with its default value."""
    d = ForgeConfig()
    out: dict[str, Any] = {k: getattr(d, k) for k in TOP_KEYS if "." not in k}
    out.update(
        {
            f"retry.{k}": getattr(d.retry, k)
            for k in ("max_attempts", "min_delay_ms", "backoff_factor", "max_delay_secs", "status_codes")
        }
    )
    out.update({f"compact.{k}": getattr(d.compact, k) for k in COMPACT_KEYS})
    out.update({f"tools.shell.{k}": getattr(d.shell, k) for k in SHELL_KEYS})
    return out
