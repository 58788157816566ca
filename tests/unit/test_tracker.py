"""ToolErrorTracker: every case of Forge's own tests, and properties against a reference model."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forge_lsp.domain.messages import ToolResult
from forge_lsp.domain.tracker import ToolErrorTracker


def batch(*items: tuple[str, bool]) -> list[ToolResult]:
    return [ToolResult(f"c{i}", name, "out", is_error=failed) for i, (name, failed) in enumerate(items)]


def test_no_tools_called_returns_empty() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record([])
    assert t.errors() == {}
    assert not t.limit_reached()


def test_only_successful_tools_never_max_out() -> None:
    t = ToolErrorTracker(1)
    for _ in range(5):
        t.adjust_record(batch(("read", False), ("shell", False)))
    assert t.errors() == {}
    assert t.maxed_out_tools() == []


def test_duplicate_failures_in_one_batch_count_once() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record(batch(("read", True), ("read", True), ("read", True)))
    assert t.errors() == {"read": 1}
    assert t.remaining_attempts("read") == 2
    assert not t.limit_reached()


def test_success_and_failure_of_same_tool_in_one_batch_does_not_clear() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record(batch(("read", True)))
    t.adjust_record(batch(("read", False), ("read", True), ("read", False)))
    assert t.error_count("read") == 2
    t.adjust_record(batch(("read", True), ("read", False)))
    assert t.limit_reached()
    assert t.maxed_out_tools() == ["read"]


def test_later_clean_success_clears_a_maxed_tool() -> None:
    t = ToolErrorTracker(2)
    t.adjust_record(batch(("shell", True)))
    t.adjust_record(batch(("shell", True)))
    assert t.limit_reached()
    t.adjust_record(batch(("shell", False)))
    assert not t.limit_reached()
    assert t.error_count("shell") == 0
    assert t.remaining_attempts("shell") == 2


def test_exactly_at_limit_is_maxed_out_and_just_under_is_not() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record(batch(("patch", True)))
    t.adjust_record(batch(("patch", True)))
    assert not t.limit_reached()
    assert t.remaining_attempts("patch") == 1
    t.adjust_record(batch(("patch", True)))
    assert t.limit_reached()
    assert t.remaining_attempts("patch") == 0


def test_remaining_attempts_saturates_at_zero() -> None:
    t = ToolErrorTracker(1)
    for _ in range(4):
        t.adjust_record(batch(("fetch", True)))
    assert t.error_count("fetch") == 4
    assert t.remaining_attempts("fetch") == 0


def test_zero_limit_maxes_out_on_first_failure() -> None:
    t = ToolErrorTracker(0)
    assert not t.limit_reached()
    t.adjust_record(batch(("read", True)))
    assert t.limit_reached()
    assert t.remaining_attempts("read") == 0


def test_other_tools_success_does_not_clear() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record(batch(("shell", True)))
    t.adjust_record(batch(("read", False)))
    assert t.errors() == {"shell": 1}


def test_multiple_tools_maxed_out() -> None:
    t = ToolErrorTracker(1)
    t.adjust_record(batch(("read", True), ("shell", True), ("patch", False)))
    assert t.maxed_out_tools() == ["read", "shell"]


def test_per_tool_limits_override_the_turn_limit() -> None:
    t = ToolErrorTracker(3, {"shell": 2, "fetch": 5})
    t.adjust_record(batch(("shell", True), ("fetch", True), ("read", True)))
    assert (t.remaining_attempts("shell"), t.remaining_attempts("fetch"), t.remaining_attempts("read")) == (1, 4, 2)
    t.adjust_record(batch(("shell", True), ("fetch", True), ("read", True)))
    assert t.maxed_out_tools() == ["shell"]
    for _ in range(2):
        t.adjust_record(batch(("fetch", True)))
    assert t.maxed_out_tools() == ["shell"]
    t.adjust_record(batch(("fetch", True)))
    assert t.maxed_out_tools() == ["fetch", "shell"]


def test_errors_returns_a_copy() -> None:
    t = ToolErrorTracker(3)
    t.adjust_record(batch(("read", True)))
    t.errors()["read"] = 99
    assert t.error_count("read") == 1


NAMES = st.sampled_from(["read", "write", "patch", "shell", "fetch"])
BATCHES = st.lists(st.lists(st.tuples(NAMES, st.booleans()), max_size=6), max_size=25)


def reference(limit: int, batches: list[list[tuple[str, bool]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for items in batches:
        failed = {n for n, f in items if f}
        ok = {n for n, f in items if not f}
        for n in failed:
            counts[n] = counts.get(n, 0) + 1
        for n in ok - failed:
            counts.pop(n, None)
    return counts


@given(st.integers(min_value=0, max_value=6), BATCHES)
def test_counts_equal_reference_model(limit: int, batches: list[list[tuple[str, bool]]]) -> None:
    t = ToolErrorTracker(limit)
    for items in batches:
        t.adjust_record(batch(*items))
    expected = reference(limit, batches)
    assert t.errors() == expected
    assert t.maxed_out_tools() == sorted(n for n, c in expected.items() if c >= limit)
    assert t.limit_reached() == any(c >= limit for c in expected.values())


@given(st.integers(min_value=0, max_value=6), BATCHES, NAMES)
def test_remaining_attempts_never_negative(limit: int, batches: list[list[tuple[str, bool]]], name: str) -> None:
    t = ToolErrorTracker(limit)
    for items in batches:
        t.adjust_record(batch(*items))
        assert 0 <= t.remaining_attempts(name) <= limit
        assert t.remaining_attempts(name) == max(0, limit - t.error_count(name))
