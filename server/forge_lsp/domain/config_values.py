"""The values of the configuration keys, checked: each check returns the normalised value or raises ValueError
with a reason a user can act on (domain/config.py's KEYS table names one per key)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forge_lsp.domain.hooks import Hook

SANDBOXES = ("bwrap", "none")
SCRIPTED_PREFIX = "scripted/"

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


EDIT_REVIEWS = ("auto", "confirm")
"""edit_review's values, loosest first: "confirm" has the user accept each edit before it lands."""


def _choice(choices: tuple[str, ...]) -> Check:
    def check(v: Any) -> str:
        s = _str(v)
        if s not in choices:
            raise ValueError(f"expected one of {', '.join(map(repr, choices))}, got {s!r}")
        return s

    return check


def _hooks(v: Any) -> tuple[Hook, ...]:
    """[[hooks]] entries as the config files' loader read them (hooks_config.py: each entry checked alone, with its
    line); the raw tables of any other layer are refused: editor settings can be written by a workspace
    (.vscode/settings.json), and a hook is a program."""
    if isinstance(v, list | tuple) and all(isinstance(h, Hook) for h in v):
        return tuple(v)
    raise ValueError("hooks are read only from your config.toml and a trusted workspace's .forge.toml, not from editor settings")


MAX_VERIFY_WAIT_MS = 60_000
"""The longest [verify] wait_ms: an edit never waits a minute for the editor's language servers."""


def _wait_ms(v: Any) -> int:
    value: int = _int(0)(v)
    if value > MAX_VERIFY_WAIT_MS:
        raise ValueError(f"must be <= {MAX_VERIFY_WAIT_MS}, got {v}")
    return value


def _int_list(v: Any) -> tuple[int, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError(f"expected a list of integers, got {_kind(v)}")
    return tuple(v)


def _repeats(v: Any) -> int:
    """max_repeated_calls_per_turn: 0 (off) or at least 2 (at 1 every call would be its own repeat)."""
    n: int = _int(0)(v)
    if n == 1:
        raise ValueError("must be 0 (off) or at least 2, got 1 (every call would count as repeated)")
    return n


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "a list", dict: "a table"}.get(
        type(v), type(v).__name__
    ) + (f" ({v!r})" if isinstance(v, bool | int | float | str) else "")


BUILTIN_SCRIPTS = ("demo", "echo")
"""The scripts that ship with forge-lsp (llm.builtin_scripts; a test keeps the two the same)."""


def _scripted(v: Any) -> bool:
    """A scripted model whose script the workspace could have written: a file, not a builtin (scripted/echo)."""
    return isinstance(v, str) and v.startswith(SCRIPTED_PREFIX) and v[len(SCRIPTED_PREFIX) :] not in BUILTIN_SCRIPTS
