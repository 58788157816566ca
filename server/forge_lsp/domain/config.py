"""The configuration model: every key's type, default and layer rules, in one table.

One schema serves every layer (defaults, user, editor, workspace). KEYS has one KeySpec row
per key; what the rest of the project needs (defaults, the per-key checks, which keys an
untrusted workspace may set and in which direction, the lists merged across layers) is
derived from it. Values are checked here, purely; reading files and finding line numbers is
config.py's.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forge_lsp.domain.config_values import BUILTIN_SCRIPTS as BUILTIN_SCRIPTS
from forge_lsp.domain.config_values import EDIT_REVIEWS as EDIT_REVIEWS
from forge_lsp.domain.config_values import MAX_VERIFY_WAIT_MS as MAX_VERIFY_WAIT_MS
from forge_lsp.domain.config_values import SANDBOXES as SANDBOXES
from forge_lsp.domain.config_values import SCRIPTED_PREFIX as SCRIPTED_PREFIX
from forge_lsp.domain.config_values import (
    Check,
    _bool,
    _choice,
    _float,
    _fraction,
    _hooks,
    _int,
    _int_list,
    _model,
    _repeats,
    _sandbox,
    _scripted,
    _str,
    _str_list,
    _wait_ms,
)
from forge_lsp.domain.hooks import Hook
from forge_lsp.domain.problems import DIAGNOSTICS_MODES, SEVERITY_LEVELS
from forge_lsp.domain.tool_catalog import TOOL_NAMES

WORKSPACE_FILE = ".forge.toml"
# Tables nest at most this deep in the schema ([tools.shell] deny is 3); deeper is refused, never recursed into.
MAX_DEPTH = 8

# Why a workspace value is ignored while the workspace is untrusted (DESIGN "Trust").
NEEDS_TRUST = "this setting can run code or loosen your rules"
SENDS_ELSEWHERE = "a workspace may not send your requests (and API key) to another address"
SHELL_RULES = "shell rules and sandbox settings come only from a trusted workspace"
SCRIPTED_MODEL = "a scripted model's script file from the workspace would let the repository choose the tool calls"
PRIVATE_NETWORKS = "a workspace may not let fetch reach your machine, your local networks or a cloud metadata service"
HOOKS_RUN = "a hook is a program: it runs as you, outside the shell sandbox"

HIGHER = 1
"""KeySpec.looser: a bigger number allows more (requests, failures, time, bytes, tokens sent)."""
LOWER = -1
"""KeySpec.looser: a smaller number allows more (retries hammer the provider sooner)."""
ANY_TOOL = "<name>"
"""The tool part of a [tools.<name>] row: it stands for every tool but the shell, which has its own rows."""


@dataclass(frozen=True)
class KeySpec:
    """One config key: its type, default, and the rules of the layers that set it."""

    key: str
    """The dotted name ("retry.max_attempts", "tools.shell.deny"; "tools.<name>.max_failures")."""
    check: Check
    """The type and range: the normalised value, or ValueError."""
    default: Any = None
    """The value when no layer sets the key (None: unset; see fallback)."""
    trust: str | None = NEEDS_TRUST
    """Why a value from an untrusted workspace is ignored; None: it applies from any workspace
    (a limit only as far as `looser` allows). Needing trust is the default, so a new key is safe."""
    trust_if: Callable[[Any], bool] | None = None
    """Only the values this accepts need trust (a scripted model); None: every value does."""
    looser: int = 0
    """HIGHER or LOWER: the direction that loosens the limit, which an untrusted workspace may not
    move it in past the user's value; 0: no value loosens anything (temperature, windows)."""
    zero_is_off: bool = False
    """0 means never (a compaction threshold): the loosest value of all."""
    fallback: str | None = None
    """The key in effect while this one is unset (a per-tool limit falls back to the general one)."""
    union: bool = False
    """Lists merged across layers: a later layer adds rules, never removes one."""
    ranks: tuple[str, ...] = ()
    """The values from loosest to tightest: a workspace, trusted or not, may only move the key to a tighter one."""

    def __post_init__(self) -> None:
        if self.looser not in (HIGHER, LOWER, 0):
            raise ValueError(f"{self.key}: looser is HIGHER, LOWER or 0")
        if self.looser and self.trust is not None:
            raise ValueError(f"{self.key}: a key that needs trust has no direction to tighten")
        if self.zero_is_off and not self.looser:
            raise ValueError(f"{self.key}: zero_is_off needs a direction")
        if self.trust_if is not None and self.trust is None:
            raise ValueError(f"{self.key}: trust_if without a reason")

    @property
    def pattern(self) -> bool:
        """Whether the row stands for many keys ([tools.<name>]) rather than being one."""
        return ANY_TOOL in self.key


def _table(*rows: KeySpec) -> dict[str, KeySpec]:
    table: dict[str, KeySpec] = {}
    for row in rows:
        if row.key in table:
            raise ValueError(f"{row.key}: two rows")
        table[row.key] = row
    for row in rows:
        if row.fallback is not None and row.fallback not in table:
            raise ValueError(f"{row.key}: falls back to {row.fallback}, which has no row")
    return table


# Every config key, one row each. Untrusted, a workspace may set only the rows with trust=None,
# and a limit (looser) only to a value no looser than what the user would otherwise have.
KEYS: dict[str, KeySpec] = _table(
    KeySpec("model", _model, None, trust=SCRIPTED_MODEL, trust_if=_scripted),
    KeySpec("api_base", _str, None, trust=SENDS_ELSEWHERE),
    KeySpec("max_tool_failure_per_turn", _int(0), 3, trust=None, looser=HIGHER),
    KeySpec("max_requests_per_turn", _int(1), 100, trust=None, looser=HIGHER),
    KeySpec("max_repeated_calls_per_turn", _repeats, 6, trust=None, looser=HIGHER, zero_is_off=True),
    KeySpec("tool_timeout_secs", _int(1), 300, trust=None, looser=HIGHER),
    KeySpec("request_timeout_secs", _int(1), 300, trust=None, looser=HIGHER),
    KeySpec("temperature", _float(0.0), None, trust=None),
    KeySpec("max_tokens", _int(1), None, trust=None, looser=HIGHER),
    KeySpec("context_window", _int(1), None, trust=None, looser=HIGHER),
    KeySpec("max_read_lines", _int(1), 2000, trust=None, looser=HIGHER),
    KeySpec("max_line_chars", _int(1), 2000, trust=None, looser=HIGHER),
    KeySpec("max_file_size_bytes", _int(1), 10 * 1024 * 1024, trust=None, looser=HIGHER),
    KeySpec("max_search_lines", _int(1), 1000, trust=None, looser=HIGHER),
    KeySpec("max_stdout_prefix_lines", _int(0), 100, trust=None, looser=HIGHER),
    KeySpec("max_stdout_suffix_lines", _int(0), 100, trust=None, looser=HIGHER),
    KeySpec("max_stdout_line_chars", _int(1), 500, trust=None, looser=HIGHER),
    KeySpec("max_fetch_chars", _int(1), 50000, trust=None, looser=HIGHER),
    KeySpec("retry.max_attempts", _int(1), 8, trust=None, looser=HIGHER),
    KeySpec("retry.min_delay_ms", _int(0), 1000, trust=None, looser=LOWER),
    KeySpec("retry.backoff_factor", _float(1.0), 2.0, trust=None, looser=LOWER),
    KeySpec("retry.max_delay_secs", _float(0.0), 60.0, trust=None, looser=LOWER),
    KeySpec("retry.status_codes", _int_list, (408, 429, 500, 502, 503, 504, 520, 522, 524, 529), trust=None),
    KeySpec("retry.max_total_secs", _int(1), None, trust=None, looser=HIGHER),
    KeySpec("compact.retention_window", _int(0), 6, trust=None),
    KeySpec("compact.eviction_window", _fraction, 0.2, trust=None),
    KeySpec("compact.max_tokens", _int(1), 2000, trust=None, looser=HIGHER),
    KeySpec("compact.token_threshold", _int(0), 100000, trust=None, looser=HIGHER, zero_is_off=True),
    KeySpec("compact.turn_threshold", _int(0), 0, trust=None, looser=HIGHER, zero_is_off=True),
    KeySpec("compact.message_threshold", _int(0), 200, trust=None, looser=HIGHER, zero_is_off=True),
    KeySpec("compact.on_turn_end", _bool, False, trust=None),
    KeySpec("edit_review", _choice(EDIT_REVIEWS), "auto", trust=None, ranks=EDIT_REVIEWS),
    KeySpec(f"tools.{ANY_TOOL}.max_failures", _int(0), None, trust=None, looser=HIGHER, fallback="max_tool_failure_per_turn"),
    KeySpec("tools.shell.max_failures", _int(0), None, trust=None, looser=HIGHER, fallback="max_tool_failure_per_turn"),
    KeySpec("tools.shell.fail_on_nonzero_exit", _bool, True, trust=SHELL_RULES),
    KeySpec("tools.shell.timeout_secs", _int(1), None, trust=None, looser=HIGHER, fallback="tool_timeout_secs"),
    KeySpec("tools.shell.deny", _str_list, (), trust=SHELL_RULES, union=True),
    KeySpec("tools.shell.confirm", _str_list, (), trust=SHELL_RULES, union=True),
    KeySpec("tools.shell.sandbox", _sandbox, None, trust=SHELL_RULES),
    KeySpec("tools.shell.network", _bool, False, trust=SHELL_RULES),
    KeySpec("tools.shell.allow_env", _str_list, (), trust=SHELL_RULES),
    KeySpec("tools.fetch.allow_private_networks", _bool, False, trust=PRIVATE_NETWORKS),
    KeySpec("mcp.startup_timeout_secs", _int(1), 10, trust=None, looser=HIGHER),
    KeySpec("mcp.confirm", _str_list, (), trust=None, union=True),
    KeySpec("hooks", _hooks, (), trust=HOOKS_RUN, union=True),
    KeySpec("hooks.max_stop_blocks", _int(0), 3, trust=None, looser=HIGHER),
    KeySpec("verify.diagnostics", _choice(DIAGNOSTICS_MODES), "report", trust=None, ranks=DIAGNOSTICS_MODES),
    KeySpec("verify.severity", _choice(SEVERITY_LEVELS), "error", trust=None, ranks=SEVERITY_LEVELS),
    KeySpec("verify.wait_ms", _wait_ms, 2000, trust=None, looser=LOWER),
)
UNION_KEYS = frozenset(k for k, spec in KEYS.items() if spec.union)
"""Lists merged across layers (union): a later layer adds rules, never removes one."""
SECRET_KEYS = frozenset({"api_key", "apikey", "api-key"})


def spec_of(key: str) -> KeySpec | None:
    """The row of one dotted key ("tools.fetch.max_failures" is the [tools.<name>] row), or None."""
    if (spec := KEYS.get(key)) is not None:
        return spec
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "tools" and parts[1] != "shell" and (parts[1] in TOOL_NAMES or is_mcp_tool(parts[1])):
        return KEYS.get(f"tools.{ANY_TOOL}.{parts[2]}")
    return None


MCP_PREFIX = "mcp_"
_MCP_TOOL = re.compile(r"^mcp_[a-zA-Z0-9_*?\[\]-]{1,60}$")


def is_mcp_tool(name: str) -> bool:
    """An MCP tool's name (mcp_<server>_<tool>) or a glob of them ("mcp_github_*"): a [tools.<name>] table may name it."""
    return bool(_MCP_TOOL.match(name))


def _default(key: str) -> Any:
    return KEYS[key].default


# The settings as the rest of the project reads them; every default is its KEYS row's.


@dataclass(frozen=True)
class RetryConfig:
    """Request-level retry of model calls (HTTP 429/5xx, timeouts, empty replies)."""

    max_attempts: int = _default("retry.max_attempts")
    min_delay_ms: int = _default("retry.min_delay_ms")
    backoff_factor: float = _default("retry.backoff_factor")
    max_delay_secs: float = _default("retry.max_delay_secs")
    status_codes: tuple[int, ...] = _default("retry.status_codes")
    max_total_secs: int | None = _default("retry.max_total_secs")
    """Seconds one model request may take with all its retries; None: 2 x request_timeout_secs (domain/retry)."""


@dataclass(frozen=True)
class ToolConfig:
    """Per-tool settings ([tools.<name>])."""

    max_failures: int | None = _default(f"tools.{ANY_TOOL}.max_failures")


@dataclass(frozen=True)
class ShellConfig:
    """Settings of the shell tool ([tools.shell])."""

    max_failures: int | None = _default("tools.shell.max_failures")
    fail_on_nonzero_exit: bool = _default("tools.shell.fail_on_nonzero_exit")
    timeout_secs: int | None = _default("tools.shell.timeout_secs")
    deny: tuple[str, ...] = _default("tools.shell.deny")
    confirm: tuple[str, ...] = _default("tools.shell.confirm")
    sandbox: str | None = _default("tools.shell.sandbox")
    """"bwrap" or "none"; None lets the shell tool decide (bwrap in an untrusted workspace when installed)."""
    network: bool = _default("tools.shell.network")
    allow_env: tuple[str, ...] = _default("tools.shell.allow_env")
    """Environment names the user allows the model to set in a shell call's env (e.g. PATH)."""


@dataclass(frozen=True)
class FetchConfig:
    """Settings of the fetch tool of its own ([tools.fetch]; its max_failures is a [tools.<name>] one)."""

    allow_private_networks: bool = _default("tools.fetch.allow_private_networks")
    """Whether fetch may reach this machine, link-local, private, multicast/reserved and metadata addresses."""


@dataclass(frozen=True)
class McpConfig:
    """Settings of the MCP servers' tools ([mcp])."""

    startup_timeout_secs: int = _default("mcp.startup_timeout_secs")
    """How long the first turn waits for the servers to start and list their tools."""
    confirm: tuple[str, ...] = _default("mcp.confirm")
    """Globs of MCP tool names ("mcp_git_*") that ask the user before each call."""


@dataclass(frozen=True)
class HookSettings:
    """The [hooks] table's settings of the user's hooks (the hooks themselves: ForgeConfig.hooks)."""

    max_stop_blocks: int = _default("hooks.max_stop_blocks")
    """How many times a turn its stop hooks may refuse its end (exit 2)."""


@dataclass(frozen=True)
class VerifyConfig:
    """[verify]: the editor's diagnostics of the files a call changed, checked after it (core/editor_check.py)."""

    diagnostics: str = _default("verify.diagnostics")
    """"off", "report" (new problems go into the call's result) or "fail" (and the call is a failed one)."""
    severity: str = _default("verify.severity")
    """The least severe problem that counts: "error", or "warning" (errors and warnings)."""
    wait_ms: int = _default("verify.wait_ms")
    """The most an edit waits for the editor's language servers to report on it (a bound, not a sleep)."""


@dataclass(frozen=True)
class CompactConfig:
    """Forge's [compact]: when older messages are replaced by a summary in what the model is sent.

    Thresholds of 0 are off. Defaults are Forge's.
    """

    retention_window: int = _default("compact.retention_window")
    """The most recent messages never summarized."""
    eviction_window: float = _default("compact.eviction_window")
    """The most of the context (a share of its tokens, 0.0 to 1.0) one compaction may summarize."""
    max_tokens: int = _default("compact.max_tokens")
    """The most tokens one summary may take (its oldest parts are dropped first)."""
    token_threshold: int = _default("compact.token_threshold")
    turn_threshold: int = _default("compact.turn_threshold")
    message_threshold: int = _default("compact.message_threshold")
    on_turn_end: bool = _default("compact.on_turn_end")
    """Compact when the last message is the user's (each turn's start)."""


@dataclass(frozen=True)
class ForgeConfig:
    """Every effective setting of one workspace."""

    model: str | None = _default("model")
    """No silent default: a turn with no model set anywhere fails, saying where to set one."""
    api_base: str | None = _default("api_base")
    max_tool_failure_per_turn: int = _default("max_tool_failure_per_turn")
    max_requests_per_turn: int = _default("max_requests_per_turn")
    max_repeated_calls_per_turn: int = _default("max_repeated_calls_per_turn")
    """The same call (or sequence of calls) this many times in a row interrupts the turn; 0: never."""
    tool_timeout_secs: int = _default("tool_timeout_secs")
    request_timeout_secs: int = _default("request_timeout_secs")
    temperature: float | None = _default("temperature")
    max_tokens: int | None = _default("max_tokens")
    context_window: int | None = _default("context_window")
    """The model's context window in tokens when the user says it; None: litellm's model info or the server's."""
    max_read_lines: int = _default("max_read_lines")
    max_line_chars: int = _default("max_line_chars")
    max_file_size_bytes: int = _default("max_file_size_bytes")
    max_search_lines: int = _default("max_search_lines")
    max_stdout_prefix_lines: int = _default("max_stdout_prefix_lines")
    max_stdout_suffix_lines: int = _default("max_stdout_suffix_lines")
    max_stdout_line_chars: int = _default("max_stdout_line_chars")
    max_fetch_chars: int = _default("max_fetch_chars")
    edit_review: str = _default("edit_review")
    """"auto": the agent's edits land as it makes them; "confirm": each one waits for the user's yes."""
    trusted: bool = False
    """Whether the workspace is trusted (not a config key: the runtime sets it). Tools read it,
    e.g. the shell's sandbox default for an untrusted workspace."""
    rule_origins: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """Where each rule of a merged list was set ((key, rule) -> "FILE:LINE" or "editor settings"; not a config
    key: the loader sets it), so a refusal can say where to change the rule."""
    retry: RetryConfig = field(default_factory=RetryConfig)
    compact: CompactConfig = field(default_factory=CompactConfig)
    shell: ShellConfig = field(default_factory=ShellConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    tools: Mapping[str, ToolConfig] = field(default_factory=dict)
    hooks: tuple[Hook, ...] = _default("hooks")
    """The user's [[hooks]] (domain/hooks.py): every layer's, the user's first, a trusted workspace's after them."""
    hook_settings: HookSettings = field(default_factory=HookSettings)

    def per_tool_limits(self) -> dict[str, int]:
        """The [tools.<name>] max_failures overrides, shell included (a name may be a glob of MCP tools: "mcp_github_*")."""
        limits = {n: t.max_failures for n, t in self.tools.items() if t.max_failures is not None}
        if self.shell.max_failures is not None:
            limits["shell"] = self.shell.max_failures
        return limits

    def shell_timeout(self) -> int:
        """Seconds a shell command may run."""
        return self.shell.timeout_secs if self.shell.timeout_secs is not None else self.tool_timeout_secs


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
    spec = spec_of(key)
    if spec is None:
        raise KeyError(key)
    return spec.check(value)


SUGGESTED_KEYS = 20
"""A layer's first unknown keys are told the known key they are closest to (a file of
thousands of bad keys is not worth a search each)."""


def unknown_key(key: str) -> str:
    """The problem of a key no schema has, with the known key it is closest to (a typo's fix)."""
    parts = key.split(".")
    known = [k for k, spec in KEYS.items() if not spec.pattern]
    if len(parts) == 3 and parts[0] == "tools":
        tools = [t for t in TOOL_NAMES if t != "shell"]
        known += [k.replace(ANY_TOOL, t) for k, spec in KEYS.items() if spec.pattern for t in tools]
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


def trust_reason(key: str, value: Any) -> str | None:
    """Why a checked workspace value needs a trusted workspace, or None when it applies anyway.

    An allow-list: a key without a row (or whose row does not say trust=None) needs trust.
    """
    spec = spec_of(key)
    if spec is None:
        return NEEDS_TRUST
    if spec.trust is None or (spec.trust_if is not None and not spec.trust_if(value)):
        return None
    return spec.trust


def limit_direction(key: str) -> int:
    """HIGHER (+1) when a higher value loosens the key, LOWER (-1) when a lower one does, 0 when neither."""
    spec = spec_of(key)
    return spec.looser if spec is not None else 0


def limit_baseline(key: str, values: Mapping[str, Any]) -> Any:
    """What the key is in effect before the workspace layer (a per-tool limit falls back to the general one)."""
    value = values.get(key)
    if value is not None:
        return value
    spec = spec_of(key)
    if spec is not None and spec.fallback is not None:
        return values.get(spec.fallback)
    return None


def looser_than(key: str, value: Any, baseline: Any) -> bool:
    """Whether an untrusted workspace's value would loosen the user's baseline for this key."""
    spec = spec_of(key)
    if spec is not None and spec.ranks:
        return value in spec.ranks and baseline in spec.ranks and spec.ranks.index(value) < spec.ranks.index(baseline)
    if spec is None or not spec.looser or baseline is None or not isinstance(value, int | float) or isinstance(value, bool):
        return False
    if spec.zero_is_off:
        inf = float("inf")
        value, baseline = (value or inf), (baseline or inf)
    return bool(value > baseline) if spec.looser > 0 else bool(value < baseline)


def build(values: Mapping[str, Any]) -> ForgeConfig:
    """A ForgeConfig from checked dotted values (missing keys keep defaults)."""
    top = {k: v for k, v in values.items() if "." not in k}
    retry = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("retry.")}
    compact = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("compact.")}
    shell = {k.split(".", 2)[2]: v for k, v in values.items() if k.startswith("tools.shell.")}
    fetch = {k.split(".", 2)[2]: v for k, v in values.items() if k.startswith("tools.fetch.") and k in KEYS}
    mcp = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("mcp.")}
    hooks = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("hooks.")}
    verify = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("verify.")}
    tools: dict[str, dict[str, Any]] = {}
    for k, v in values.items():
        parts = k.split(".")
        if (
            parts[0] == "tools" and parts[1] != "shell" and k not in KEYS
        ):  # [tools.<name>] rows; [tools.fetch] has rows of its own
            tools.setdefault(parts[1], {})[parts[2]] = v
    return ForgeConfig(
        **top,
        retry=RetryConfig(**retry),
        compact=CompactConfig(**compact),
        shell=ShellConfig(**shell),
        fetch=FetchConfig(**fetch),
        mcp=McpConfig(**mcp),
        verify=VerifyConfig(**verify),
        tools={n: ToolConfig(**t) for n, t in tools.items()},
        hook_settings=HookSettings(**hooks),
    )


def default_values() -> dict[str, Any]:
    """Every known dotted key with its default value ([tools.<name>] rows stand for no one key)."""
    return {k: spec.default for k, spec in KEYS.items() if not spec.pattern}
