"""Secrets never reach what the server writes: state, transcripts, logs, events, results, the CLI's output.

Two kinds of secret are removed. Values of the process environment whose
names say they are credentials (*_KEY, *TOKEN*, *SECRET*, *PASSWORD*, ...,
and the password of any credential URL in a value), wherever they appear.
And text that has the shape of a credential whatever its origin: OpenAI
(sk-..., sk-proj-...), Anthropic (sk-ant-...), GitHub (ghp_, gho_, ghu_,
ghs_, ghr_, github_pat_) and AWS (AKIA..., ASIA...) keys, the password in
scheme://user:password@host, and the value of NAME=value where NAME is a
credential name (an echoed .env file, `env` output, an unsaved .env buffer).
One list of names, SECRET_NAMES, says what a credential name is for both.

Every pattern starts with a literal or is gated by a substring test, so that
text with nothing to redact (nearly all of it) costs one scan per pattern, and
none goes back over what it scanned: redaction is linear in the text (a text
made to be slow, like "_KEY" repeated, costs what its length does;
bench/redact_bench.py measures it).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 6

SECRET_NAMES = (
    "*_KEY",
    "*_KEY_*",
    "*APIKEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PASS_*",
    "PASS_*",
    "*_PWD",  # MYSQL_PWD; not PWD (the working folder) nor OLDPWD
    "*_PWD_*",
    "*_PW",
    "*_PAT",  # a personal access token (GH_PAT); not PATH
    "*_PAT_*",
    "*CREDENTIAL*",
    "*_CREDS",
    "*_CREDS_*",
    "*_AUTH",  # NPM_AUTH, ...; not GIT_AUTHOR_NAME
    "*_AUTH_*",
    "AUTH_*",
    "*AUTHORIZATION*",
    "*_COOKIE*",
    "*_SESSION",
    "*_DSN",  # SENTRY_DSN: a URL carrying a key
    "*_PRIVATE*",
)
"""Names of environment variables that hold credentials (globs on the upper-cased name), defined once:
their values are redacted everywhere, and the shell sandbox does not pass them on."""
# ://user:password@ -> the password (group 2). The user name stays: it helps and is not a secret.
_URL_PASSWORD = re.compile(r"://([^\s/:@\"'<>]*):([^\s/@\"'<>]+)@")
# Each shape starts with a literal, so the regex engine skips to it; the word boundary before it is
# checked in _shape (a look-behind first would make the engine try every position).
_SHAPES = (
    # OpenAI (sk-..., sk-proj-..., sk-svcacct-...) and Anthropic (sk-ant-api03-...) keys.
    (re.compile(r"sk-[A-Za-z0-9_-]{20,}"), "-"),
    # GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained PATs.
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"), ""),
    (re.compile(r"github_pat_[A-Za-z0-9_]{20,}"), ""),
    # AWS access key ids (long-term AKIA, temporary ASIA).
    (re.compile(r"A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), ""),
)
# NAME=value, as in .env files and `env` output (upper-case names only: code's `token = get_token()` is not
# a secret); the name is then tested against SECRET_NAMES. The look-behind makes every run of name
# characters tried once, from its start (a name that ends in no "=" costs its length, not its square); it
# comes after the first letter, so the engine skips to the next capital instead of testing every position.
# A quoted value is taken to its closing quote (a password with a space in it), a bare one to a space.
_ASSIGNMENT = re.compile(
    r"([A-Z](?<![A-Za-z0-9_][A-Z])[A-Z0-9_]*)="
    rf"""(?:"([^"\n$][^"\n]{{{MIN_SECRET_LEN - 1},}})|'([^'\n$][^'\n]{{{MIN_SECRET_LEN - 1},}})"""
    rf"""|([^\s"'$][^\s"']{{{MIN_SECRET_LEN - 1},}}))"""
)


def _globs(where: str) -> tuple[str, ...]:
    """The words of the SECRET_NAMES globs with a '*' where said: "both" ends, "end" only, "start" only, "none"."""
    out = []
    for glob in SECRET_NAMES:
        core = glob.strip("*")
        assert core and not any(c in core for c in "*?["), f"{glob}: only a '*' at either end is supported"
        star = (glob.startswith("*"), glob.endswith("*"))
        if star == {"both": (True, True), "start": (True, False), "end": (False, True), "none": (False, False)}[where]:
            out.append(core)
    return tuple(out)


# SECRET_NAMES as plain string tests (fnmatch would build a backtracking regex for each glob, and these run on
# every NAME=value of every text): *WORD* (one regex of literals), *WORD, WORD*, WORD.
_CONTAINS = re.compile("|".join(re.escape(core) for core in _globs("both")))
_ENDS = _globs("start")
_STARTS = _globs("end")
_EXACT = frozenset(_globs("none"))
_NAME_PARTS = tuple(dict.fromkeys(glob.strip("*") for glob in SECRET_NAMES))
"""What a credential name holds, one of them at least: a text without any has no NAME=value to redact."""


def _word_start(text: str, start: int, extra: str) -> bool:
    """Whether a match at start begins a word (not the middle of a longer identifier)."""
    if start == 0:
        return True
    before = text[start - 1]
    return not (before.isascii() and (before.isalnum() or before == "_" or before in extra))


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (SECRET_NAMES)."""
    return _upper_secret(name.upper())


def _upper_secret(upper: str) -> bool:
    return upper.endswith(_ENDS) or upper.startswith(_STARTS) or upper in _EXACT or _CONTAINS.search(upper) is not None


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Secret values of an environment (the process's by default), longest first.

    A variable named like a credential gives its value; a value holding a
    credential URL (DATABASE_URL=postgres://u:pw@h) gives its password.
    """
    if env is None:
        if not _ADDED:
            return list(_process_secrets())
        return sorted({*_process_secrets(), *_ADDED}, key=len, reverse=True)
    values: set[str] = set()
    for name, value in env.items():
        if is_secret_name(name) and len(value) >= MIN_SECRET_LEN:
            values.add(value)
        for m in _URL_PASSWORD.finditer(value):
            if len(m.group(2)) >= MIN_SECRET_LEN:
                values.add(m.group(2))
    return sorted(values, key=len, reverse=True)


_ADDED: set[str] = set()
"""Secrets the server learned besides its environment's names (values an MCP entry's ${NAME} expanded to)."""


def add_secrets(values: Iterable[str]) -> None:
    """Redact these values from now on, wherever redact() runs with the default secrets."""
    _ADDED.update(v for v in values if len(v) >= MIN_SECRET_LEN)


@cache
def _process_secrets() -> tuple[str, ...]:
    # The process environment does not change under a running server: scan it once.
    return tuple(secret_values(dict(os.environ)))


def _shape(extra: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        return REDACTED if _word_start(m.string, m.start(), extra) else m.group()

    return replace


_REPLACERS = tuple((pattern, _shape(extra)) for pattern, extra in _SHAPES)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """text with every secret value and credential-shaped string replaced by [REDACTED]."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replace in _REPLACERS:
        text = pattern.sub(replace, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"://{m.group(1)}:{REDACTED}@", text)
    if "=" in text and any(part in text for part in _NAME_PARTS):
        text = _ASSIGNMENT.sub(_assignment, text)
    return text


def _assignment(m: re.Match[str]) -> str:
    # The value is the last group that took part, and ends the match (a closing quote is not in it).
    if not _upper_secret(m[1]):
        return m[0]
    return m.string[m.start() : m.start(m.lastindex or 4)] + REDACTED


def redact_data(value: Any, secrets: list[str] | None = None) -> Any:
    """A JSON-like value with every string in it redacted (keys included); other values as they are."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v, secrets) for v in value]
    return value


class RedactingFormatter(logging.Formatter):
    """A log formatter whose every line is redacted: the -v log and --log-file are written where the user
    keeps them, and an exception or a library's message may carry what an MCP entry's ${NAME} expanded to."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
