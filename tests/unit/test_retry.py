"""Request-level retry policy: backoff capped, Retry-After bounded, an unreachable server retried twice."""

from __future__ import annotations

import asyncio
import time

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


class Clock:
    """A clock that moves only when an attempt says how long it took."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_no_retry_starts_once_the_attempts_spent_the_budget() -> None:
    clock = Clock()
    calls: list[int] = []

    async def request() -> str:
        calls.append(1)
        clock.now += 300  # a timeout of request_timeout_secs = 300
        raise ModelError("model request timed out after 300 s", True, kind=retry.TIMEOUT)

    async def sleep(s: float) -> None:
        clock.now += 1000  # the waits are not counted

    with pytest.raises(ModelError) as caught:
        await with_retry(request, RetryConfig(), lambda *a: None, sleep, budget_s=600, clock=clock)
    # 8 attempts allowed; 2 fit in 600 s: 40 minutes become 10.
    assert len(calls) == 2
    assert str(caught.value) == (
        "model request timed out after 300 s (not retried: its 2 attempts took 600 s, [retry] max_total_secs = 600)"
    )
    assert not caught.value.retryable


async def test_a_retry_is_cut_where_the_budget_ends() -> None:
    calls: list[float] = []

    async def request() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ModelError("model request timed out after 1 s", True, kind=retry.TIMEOUT)
        await asyncio.sleep(30)  # a retry that would run on: cut at what is left of the budget
        return "never"

    async def sleep(_: float) -> None:
        pass

    started = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 1 s \(its retry was cut at the request's time budget: 2 attempts"):
        await with_retry(request, RetryConfig(), lambda *a: None, sleep, budget_s=0.3)
    assert time.monotonic() - started < 5


async def test_the_same_answer_three_times_is_not_retried_further() -> None:
    calls: list[int] = []

    async def request() -> str:
        calls.append(1)
        raise ModelError("tools param requires --jinja flag", True, 500, kind=retry.SERVER)

    async def sleep(_: float) -> None:
        pass

    with pytest.raises(ModelError, match=r"--jinja flag \(the same failure 3 times in a row: not retried further\)"):
        await with_retry(request, RetryConfig(), lambda *a: None, sleep)
    assert len(calls) == 3


@pytest.mark.parametrize("status", [429, 503, 529])
async def test_not_now_answers_are_retried_to_the_end(status: int) -> None:
    calls: list[int] = []

    async def request() -> str:
        calls.append(1)
        raise ModelError("overloaded", True, status, kind=retry.RATE_LIMIT if status == 429 else retry.SERVER)

    async def sleep(_: float) -> None:
        pass

    with pytest.raises(ModelError):
        await with_retry(request, RetryConfig(max_attempts=5), lambda *a: None, sleep)
    assert len(calls) == 5
