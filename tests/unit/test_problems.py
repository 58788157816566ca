"""domain/problems.py: which of the editor's problems after an edit are new, and how they are told (issue 37 §1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_lsp.domain.problems import (
    ERROR,
    HINT,
    MAX_PROBLEM_LINES,
    WARNING,
    Problem,
    ProblemsLeft,
    TurnProblems,
    counts,
    for_model,
    from_lsp,
    new_problems,
)


def problem(line: int, message: str = "Undefined name `y`", code: str = "F821", severity: int = ERROR) -> Problem:
    return Problem("app.py", line, 6, severity, message, "Ruff", code)


def test_a_problem_the_file_had_is_not_new_wherever_the_edit_moved_it() -> None:
    before = [problem(1), problem(5, "`os` imported but unused", "F401")]
    after = [problem(4), problem(8, "`os` imported but unused", "F401")]  # three lines added above both
    assert new_problems(before, after) == []


def test_a_second_one_of_the_same_kind_is_new_and_the_farther_one_is_reported() -> None:
    before = [problem(10)]
    after = [problem(12), problem(40)]  # the old one moved down two lines; one more appeared far below
    assert new_problems(before, after) == [problem(40)]


def test_another_code_or_message_at_the_same_place_is_new() -> None:
    assert new_problems([problem(1)], [problem(1, "Undefined name `z`")]) == [problem(1, "Undefined name `z`")]
    assert new_problems([problem(1)], [problem(1, code="F822")]) == [problem(1, code="F822")]


def test_a_fixed_problem_is_no_new_one() -> None:
    assert new_problems([problem(1), problem(2, "x")], [problem(1)]) == []


@given(
    st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["a", "b", "c"])), max_size=12),
    st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["a", "b", "c"])), max_size=12),
)
def test_new_is_how_many_more_of_each_kind_and_they_are_after_s_own(b: list[Any], a: list[Any]) -> None:
    before = [problem(line, message) for line, message in b]
    after = [problem(line, message) for line, message in a]
    new = new_problems(before, after)
    for message in "abc":
        more = sum(1 for p in after if p.message == message) - sum(1 for p in before if p.message == message)
        assert sum(1 for p in new if p.message == message) == max(0, more)
    left = list(after)
    for p in new:
        left.remove(p)  # each new problem is one of after's, taken once


@pytest.mark.parametrize(
    ("diagnostic", "expected"),
    [
        (
            {"range": {"start": {"line": 2, "character": 4}}, "severity": 1, "source": "Ruff", "code": "F821", "message": "x"},
            Problem("a.py", 2, 4, ERROR, "x", "Ruff", "F821"),
        ),
        (
            {"message": "no range, no severity: an error at the top"},
            Problem("a.py", 0, 0, ERROR, "no range, no severity: an error at the top"),
        ),
        ({"message": "ts", "code": 2304, "source": "ts", "severity": 2}, Problem("a.py", 0, 0, WARNING, "ts", "ts", "2304")),
        ({"message": "first line\nsecond", "severity": 9, "range": "bad"}, Problem("a.py", 0, 0, ERROR, "first line")),
        ({"message": "", "severity": 1}, None),
        ({"message": 3}, None),
        ("not a diagnostic", None),
        (
            {"message": "m", "range": {"start": {"line": -3, "character": True}}, "code": {"x": 1}},
            Problem("a.py", 0, 0, ERROR, "m"),
        ),
    ],
)
def test_a_clients_diagnostic_of_any_shape_is_a_problem_or_none(diagnostic: Any, expected: Problem | None) -> None:
    assert from_lsp("a.py", diagnostic) == expected


def test_a_huge_message_is_cut() -> None:
    p = from_lsp("a.py", {"message": "x" * 10_000})
    assert p is not None and len(p.message) == 300 and p.message.endswith("…")


def test_severity_counts_errors_or_errors_and_warnings() -> None:
    assert counts(problem(0), "error") and not counts(problem(0, severity=WARNING), "error")
    assert counts(problem(0, severity=WARNING), "warning") and not counts(problem(0, severity=HINT), "warning")


def test_the_models_lines_name_file_line_column_severity_source_and_code() -> None:
    text = for_model([problem(1)], failed=False)
    assert text.splitlines() == [
        "The editor reports 1 new problem in app.py (not there before this turn's edits; from its language servers):",
        "app.py:2:7: error Ruff F821: Undefined name `y`",
        "Fix them unless they are intended.",
    ]
    assert "counts as failed" in for_model([problem(1)], failed=True)


def test_the_models_lines_are_capped() -> None:
    many = [problem(i, f"m{i}") for i in range(MAX_PROBLEM_LINES + 5)]
    lines = for_model(many, failed=False).splitlines()
    assert len(lines) == MAX_PROBLEM_LINES + 3 and lines[-2] == "... and 5 more"


def test_a_turns_problems_are_against_the_files_state_before_its_first_edit() -> None:
    turn = TurnProblems()
    turn.start("app.py", [problem(0, "old")])
    assert turn.update("app.py", [problem(0, "old"), problem(3)]) == [problem(3)]
    turn.start("app.py", [problem(0, "old"), problem(3)])  # a later edit's "before" does not move the baseline
    assert turn.update("app.py", [problem(1, "old"), problem(4)]) == [problem(4)]  # still there, moved: still new
    left = turn.left()
    assert left == ProblemsLeft((("app.py", (problem(4),)),))
    assert left.to_dict() == {"count": 1, "files": [{"path": "app.py", "count": 1}]}
    assert left.describe() == "1 new problem in app.py"
    assert turn.update("app.py", [problem(0, "old")]) == [] and turn.left() is None  # fixed
    turn.update("app.py", [problem(0, "old"), problem(9)])
    assert turn.update("app.py", None) == [] and turn.left() is None  # removed


def test_what_a_turn_leaves_in_several_files_is_said_in_one_phrase() -> None:
    left = ProblemsLeft((("a.py", (problem(1),)), ("b.py", (problem(1), problem(2, "z")))))
    assert left.describe() == "3 new problems in a.py and b.py"
    assert left.to_dict()["files"] == [{"path": "a.py", "count": 1}, {"path": "b.py", "count": 2}]
