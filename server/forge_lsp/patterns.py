"""Regular expressions from users, workspaces and MCP servers, matched in time linear in their input (RE2).

Python's re backtracks: an MCP tool schema's ``pattern: ^(a+)+$`` against ``'a'*40 + '!'`` runs for
hours, and a pattern with ``.*`` between two words (the README's own deny example,
``/(curl|wget)\\b.*\\|\\s*(ba|z|da|k)?sh\\b/``) grows with the square of its input. re holds the GIL, so a
thread would not keep the event loop going. Such patterns are compiled by RE2 (the google-re2 package),
whose matching is linear in the input for every pattern it accepts.

RE2 takes Python's syntax less lookaround, backreferences, possessive and atomic groups and
conditionals. A pattern it refuses is UnsafePattern, with RE2's reason; each caller says what that
means for it: a shell deny/confirm rule asks before the command (tools/shell.py), a JSON Schema's
pattern from an MCP server is not checked here (the server checks its own input).

jsonschema has no way to choose its regular expression engine: guard_jsonschema() gives the modules
that call re.search (pattern, patternProperties, additionalProperties, unevaluatedProperties) an
object that does it with RE2, for every validator in the process (the MCP SDK's check of a tool's
structured output too).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

MAX_PATTERN_CHARS = 16 * 1024
"""A longer pattern is refused unread (its compilation would cost its length, on every new pattern)."""


class UnsafePattern(ValueError):
    """A pattern that cannot be matched in linear time (RE2 refuses it, or it is too long): why, in words."""


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """The RE2 regex for pattern (Python's syntax, less what RE2 lacks); UnsafePattern when RE2 cannot take it."""
    if not isinstance(pattern, str):
        raise UnsafePattern(f"a pattern must be text, not {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsafePattern(f"the pattern is {len(pattern)} characters, over {MAX_PATTERN_CHARS}")
    import re2  # type: ignore[import-untyped]  # on the first pattern: the server starts without it

    options = re2.Options()
    options.log_errors = False  # RE2 would write each refusal to stderr itself
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise UnsafePattern(f"{reason} (RE2, which matches in linear time, has no lookaround or backreferences)") from None


def search(pattern: str, text: str) -> bool:
    """Whether pattern matches somewhere in text; UnsafePattern when it cannot be matched in linear time."""
    return found(compile_pattern(pattern), text) is not None


def found(regex: Any, text: str) -> Any:
    """regex.search(text), for a compiled RE2 regex; a lone surrogate in text (JSON's "\\ud800", which RE2's
    UTF-8 cannot hold) is matched as "?" instead of failing the caller."""
    try:
        return regex.search(text)
    except UnicodeEncodeError:
        return regex.search(text.encode("utf-8", "replace").decode("utf-8"))


_told: set[str] = set()


class _Re2ForJsonSchema:
    """Stands for the re module in jsonschema's keyword modules: search() through RE2.

    A pattern RE2 refuses counts as matching (so `pattern` passes, and a key it would name is not an extra
    property): the value is then not checked against it here, and that is logged once per pattern."""

    def search(self, pattern: Any, string: str, flags: int = 0) -> Any:
        try:
            return found(compile_pattern(pattern), string)
        except UnsafePattern as exc:
            key = str(pattern)[:200]
            if key not in _told:
                _told.add(key)
                log.info("a JSON Schema pattern is not checked (%s): %s", exc, key)
            return True

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


_guarded = False


def guard_jsonschema() -> None:
    """Make jsonschema match its patterns with RE2 (once; idempotent)."""
    global _guarded
    if _guarded:
        return
    import jsonschema._keywords
    import jsonschema._legacy_keywords
    import jsonschema._utils

    for module in (jsonschema._keywords, jsonschema._legacy_keywords, jsonschema._utils):
        if getattr(module, "re", None) is re:
            module.re = _Re2ForJsonSchema()  # type: ignore[attr-defined]
        else:  # a jsonschema that no longer calls re there: say so, the tests catch it
            log.warning("jsonschema's %s does not use re: its patterns may not be matched with RE2", module.__name__)
    _guarded = True
