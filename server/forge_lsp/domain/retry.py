"""Request-level retry of model calls: which errors, how long to wait, how often."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from forge_lsp.domain.config import RetryConfig

T = TypeVar("T")

# Exponential backoff never waits longer than this between two attempts: a user watching a turn
# retry an overloaded provider should see it try again within seconds, not after minutes.
BACKOFF_CAP_MS = 10_000
# An unreachable server (connection refused, no such host) is rarely back within a minute: two
# quick retries cover a server that is just starting, then the turn fails and says where it tried.
CONNECT_RETRIES = 2
CONNECT_DELAY_CAP_MS = 500

# ModelError.kind values. The adapter classifies by exception type first, HTTP status second.
CREDENTIALS = "credentials"  # an API key missing from the environment
SCRIPT = "script"  # a scripted model's script file missing or unreadable
PROVIDER = "provider"  # a model name litellm routes to no provider ("nonsense" for "openai/gpt-4o")
AUTH = "auth"  # 401: the key was refused
PERMISSION = "permission"  # 403
BAD_REQUEST = "bad_request"  # 400 / 422
NOT_FOUND = "not_found"  # 404, or a 400 that says the model does not exist
CONTEXT_WINDOW = "context_window"  # the conversation is longer than the model's window
CONNECT = "connect"  # nothing answers at the URL (refused, no such host)
TIMEOUT = "timeout"  # no reply within request_timeout_secs
RATE_LIMIT = "rate_limit"  # 429
SERVER = "server"  # 5xx and other transient statuses, a dropped connection
EMPTY = "empty"  # a reply with neither text nor tool call
OTHER = "other"
UNSENT = frozenset({CREDENTIALS, SCRIPT, PROVIDER})
"""Kinds of failure that happen before a request leaves forge-lsp: it was never sent, so it is not counted."""


@dataclass
class ModelError(Exception):
    """A model request that failed; ``retryable`` says whether to send it again.

    ``message`` is the whole plain-words text for the user when ``status`` is None; with a status the
    text reads "HTTP <status>: <message>". ``kind`` is one of the constants above.
    """

    message: str
    retryable: bool
    status: int | None = None
    retry_after_s: float | None = None
    kind: str = OTHER

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


def backoff_ms(policy: RetryConfig, attempt: int, retry_after_s: float | None = None, kind: str = OTHER) -> int:
    """Delay before retry number ``attempt`` (1-based).

    Exponential from min_delay_ms, capped at 10 s (and at max_delay_secs); a Retry-After from the
    server may ask for longer and is honoured up to max_delay_secs (default 60 s). A connection that
    was refused is retried quickly (at most 0.5 s).
    """
    delay = min(policy.min_delay_ms * policy.backoff_factor ** (attempt - 1), BACKOFF_CAP_MS)
    if kind == CONNECT:
        delay = min(delay, CONNECT_DELAY_CAP_MS)
    if retry_after_s is not None and retry_after_s > 0:
        delay = max(delay, retry_after_s * 1000)
    return max(0, int(min(delay, policy.max_delay_secs * 1000)))


def max_attempts_for(policy: RetryConfig, exc: ModelError) -> int:
    """How many attempts in all this kind of failure gets."""
    if exc.kind == CONNECT:
        return min(policy.max_attempts, 1 + CONNECT_RETRIES)
    return policy.max_attempts


IDENTICAL_LIMIT = 3
"""A failure answered the same way (status and text) this many times in a row is not retried further: the server
says the same thing about the same request (a 500 for a feature it lacks), another attempt would too."""
REPEATING_STATUSES = frozenset({429, 503, 529})
"""Statuses that say "not now" (rate limited, overloaded): the same answer each time is expected until it passes."""
BUDGET_FACTOR = 2
"""[retry] max_total_secs unset: the request's whole budget is this many times request_timeout_secs."""


def total_budget_s(policy: RetryConfig, request_timeout_s: float) -> float:
    """Seconds one request may take with its retries ([retry] max_total_secs, default 2 x request_timeout_secs)."""
    return float(policy.max_total_secs) if policy.max_total_secs else BUDGET_FACTOR * request_timeout_s


def _same_answer(exc: ModelError) -> tuple[int | None, str] | None:
    """What makes two failures the same answer, for the failures that count (None: one that may pass by itself)."""
    if exc.kind == RATE_LIMIT or exc.status in REPEATING_STATUSES:
        return None
    if exc.status is None and exc.kind != EMPTY:  # no answer at all (a dropped connection, a timeout)
        return None
    return (exc.status, exc.message)


def _attempts(n: int) -> str:
    return "its attempt" if n == 1 else f"its {n} attempts"


def _stopped(exc: ModelError, why: str) -> ModelError:
    return replace(exc, message=f"{exc.message} ({why})", retryable=False)


async def with_retry(
    request: Callable[[], Awaitable[T]],
    policy: RetryConfig,
    on_retry: Callable[[int, int, ModelError], None],
    sleep: Callable[[float], Awaitable[None]],
    *,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Run request; on a retryable ModelError wait and run it again, max_attempts times in all.

    budget_s bounds the time the attempts take in all ([retry] max_total_secs; the waits between them are bounded
    by max_delay_secs each and not counted): no retry starts once it is spent, and one that runs is cut where it
    ends (the first attempt has request_timeout_secs alone). The same failure IDENTICAL_LIMIT times in a row ends
    it too. The error raised is the last failure's, saying why it was not retried further."""
    attempt = 1
    spent = 0.0  # seconds the attempts took
    same: tuple[int | None, str] | None = None
    repeats = 0
    last: ModelError | None = None
    while True:
        started = clock()
        try:
            if last is None or budget_s is None:
                return await request()
            try:
                async with asyncio.timeout(max(budget_s - spent, 0.001)):
                    return await request()
            except TimeoutError:
                spent += clock() - started
                raise _stopped(
                    last,
                    f"its retry was cut at the request's time budget: {attempt} attempts in {spent:.0f} s, [retry] "
                    f"max_total_secs = {budget_s:g}",
                ) from None
        except ModelError as exc:
            spent += clock() - started
            if not exc.retryable:
                raise
            last = exc
            answer = _same_answer(exc)
            repeats = repeats + 1 if answer is not None and answer == same else 1
            same = answer
            if answer is not None and repeats >= IDENTICAL_LIMIT:
                raise _stopped(exc, f"the same failure {repeats} times in a row: not retried further") from exc
            if attempt >= max_attempts_for(policy, exc):
                raise
            if budget_s is not None and spent >= budget_s:
                raise _stopped(
                    exc,
                    f"not retried: {_attempts(attempt)} took {spent:.0f} s, [retry] max_total_secs = {budget_s:g}",
                ) from exc
            delay = backoff_ms(policy, attempt, exc.retry_after_s, exc.kind)
            on_retry(attempt, delay, exc)
            await sleep(delay / 1000)
            attempt += 1
