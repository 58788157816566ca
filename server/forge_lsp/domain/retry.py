"""Request-level retry of model calls: which errors, how long to wait, how often."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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


async def with_retry(
    request: Callable[[], Awaitable[T]],
    policy: RetryConfig,
    on_retry: Callable[[int, int, ModelError], None],
    sleep: Callable[[float], Awaitable[None]],
) -> T:
    """Run request; on a retryable ModelError wait and run it again, max_attempts times in all."""
    attempt = 1
    while True:
        try:
            return await request()
        except ModelError as exc:
            if not exc.retryable or attempt >= max_attempts_for(policy, exc):
                raise
            delay = backoff_ms(policy, attempt, exc.retry_after_s, exc.kind)
            on_retry(attempt, delay, exc)
            await sleep(delay / 1000)
            attempt += 1
