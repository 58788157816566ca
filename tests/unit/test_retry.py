"""Request-level retry policy: backoff capped, Retry-After bounded, an unreachable server retried twice."""

from __future__ import annotations

import pytest

from forge_lsp.domain import retry
from forge_lsp.domain.config import RetryConfig
from forge_lsp.domain.retry import ModelError, backoff_ms, with_retry


def test_backoff_is_exponential_and_capped_at_ten_seconds() -> None:
    policy = RetryConfig()  # 1 s, x2
    assert [backoff_ms(policy, n) for n in range(1, 8)] == [1000, 2000, 4000, 8000, 10000, 10000, 10000]


def test_retry_after_may_ask_for_longer_up_to_max_delay() -> None:
    policy = RetryConfig()
    assert backoff_ms(policy, 1, retry_after_s=30) == 30000
    assert backoff_ms(policy, 1, retry_after_s=86400) == 60000
    assert backoff_ms(RetryConfig(max_delay_secs=5), 6) == 5000
    assert backoff_ms(policy, 3, retry_after_s=0.5) == 4000  # never shorter than the backoff


def test_connection_refused_retries_quickly() -> None:
    assert backoff_ms(RetryConfig(), 2, kind=retry.CONNECT) == 500


@pytest.mark.parametrize(("kind", "attempts"), [(retry.CONNECT, 3), (retry.SERVER, 8), (retry.TIMEOUT, 8)])
async def test_attempts_per_kind(kind: str, attempts: int) -> None:
    calls: list[int] = []
    causes: list[str] = []

    async def request() -> str:
        calls.append(1)
        raise ModelError("down", True, kind=kind)

    async def sleep(_: float) -> None:
        pass

    with pytest.raises(ModelError):
        await with_retry(request, RetryConfig(), lambda n, d, e: causes.append(str(e)), sleep)
    assert len(calls) == attempts and len(causes) == attempts - 1


async def test_a_fatal_error_is_not_retried() -> None:
    calls: list[int] = []

    async def request() -> str:
        calls.append(1)
        raise ModelError("OPENAI_API_KEY is not set", False, kind=retry.CREDENTIALS)

    async def sleep(_: float) -> None:
        raise AssertionError("no wait for an error a retry cannot fix")

    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        await with_retry(request, RetryConfig(), lambda *a: None, sleep)
    assert calls == [1]
