"""Request-level retry of model calls: which errors, how long to wait, how often."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from forge_lsp.domain.config import RetryConfig

T = TypeVar("T")


@dataclass
class ModelError(Exception):
    """A model request that failed; ``retryable`` says whether to send it again."""

    message: str
    retryable: bool
    status: int | None = None
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


def backoff_ms(policy: RetryConfig, attempt: int, retry_after_s: float | None = None) -> int:
    """Delay before retry number ``attempt`` (1-based): exponential, capped, at least Retry-After."""
    delay = policy.min_delay_ms * policy.backoff_factor ** (attempt - 1)
    if retry_after_s is not None:
        delay = max(delay, retry_after_s * 1000)
    return int(min(delay, policy.max_delay_secs * 1000))


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
            if not exc.retryable or attempt >= policy.max_attempts:
                raise
            delay = backoff_ms(policy, attempt, exc.retry_after_s)
            on_retry(attempt, delay, exc)
            await sleep(delay / 1000)
            attempt += 1
