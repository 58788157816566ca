"""lsp.textedits: the minimal TextEdits that turn a document into the agent's text, applied as an editor would."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as t

from forge_lsp.lsp.textedits import minimal_edits, split_lines

from support.textedits import apply

ENCODINGS = (t.PositionEncodingKind.Utf16, t.PositionEncodingKind.Utf8, t.PositionEncodingKind.Utf32)


def _range(edit: t.TextEdit) -> tuple[int, int, int, int]:
    r = edit.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


PIECES = ["a", "b", "x", " ", "\t", "\n", "\r\n", "\r", "é", "漢", "😀", "\u0301"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(old=TEXT, new=TEXT, encoding=st.sampled_from(ENCODINGS))
def test_applying_the_edits_to_old_gives_new_exactly(old: str, new: str, encoding: str) -> None:
    assert apply(old, minimal_edits(old, new, encoding), encoding) == new


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["def f():\n", "    return 1\n", "\tx = 'é😀'\r\n", "# c\n", ""]), max_size=12), data=st.data()
)
def test_an_edit_of_one_line_leaves_every_other_line_untouched(lines: list[str], data: st.DataObject) -> None:
    old = "".join(lines) + "tail"
    old_lines = split_lines(old)
    row = data.draw(st.integers(0, len(old_lines) - 1))
    new_lines = list(old_lines)
    new_lines[row] = new_lines[row].replace("tail", "TAIL").replace("return", "yield") + ""
    new_lines[row] = "z" + new_lines[row]
    new = "".join(new_lines)
    edits = minimal_edits(old, new)
    assert apply(old, edits) == new
    assert all(e.range.start.line == row and e.range.end.line == row for e in edits), edits


def test_no_change_is_no_edit() -> None:
    assert minimal_edits("a\nb\n", "a\nb\n") == []


def test_a_word_changed_in_one_line_is_one_small_edit() -> None:
    old = "one\ntwo = compute(a, b)\nthree\n"
    edits = minimal_edits(old, old.replace("compute", "calc"))
    assert apply(old, edits) == old.replace("compute", "calc")
    assert all(e.range.start.line == 1 == e.range.end.line for e in edits)
    assert sum(len(e.new_text) for e in edits) <= len("calc")


def test_positions_count_utf16_code_units_after_astral_characters() -> None:
    old = "s = '😀é'; x = 1\n"
    (edit,) = minimal_edits(old, old.replace("x = 1", "x = 2"))
    # the '1' is code point 14; 😀 is two UTF-16 units (four UTF-8 bytes), é one (two bytes)
    assert _range(edit) == (0, 15, 0, 16) and edit.new_text == "2"
    (edit8,) = minimal_edits(old, old.replace("x = 1", "x = 2"), t.PositionEncodingKind.Utf8)
    assert _range(edit8) == (0, 18, 0, 19)


def test_crlf_document_keeps_its_line_endings_and_lines() -> None:
    old = "a\r\nb\r\nc\r\n"
    new = "a\r\nB\r\nc\r\n"
    (edit,) = minimal_edits(old, new)
    assert _range(edit) == (1, 0, 1, 1) and edit.new_text == "B"
    inserted = minimal_edits(old, "a\r\nb\r\nnew\r\nc\r\n")
    assert [(_range(e), e.new_text) for e in inserted] == [((2, 0, 2, 0), "new\r\n")]


def test_a_line_ending_changed_alone_is_replaced_whole() -> None:
    edits = minimal_edits("a\r\nb\n", "a\nb\n")
    assert [(_range(e), e.new_text) for e in edits] == [((0, 1, 1, 0), "\n")]


def test_tabs_are_one_unit() -> None:
    (edit,) = minimal_edits("\t\tx = 1\n", "\t\tx = 2\n")
    assert _range(edit) == (0, 6, 0, 7)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("a\nlast", "a\nlast!", [((1, 4, 1, 4), "!")]),
        ("a\nlast", "a\nlast\n", [((1, 4, 1, 4), "\n")]),
        ("a\nlast\n", "a\nlast", [((1, 4, 2, 0), "")]),
        ("a\n", "a\nmore\n", [((1, 0, 1, 0), "more\n")]),
        ("", "new\n", [((0, 0, 0, 0), "new\n")]),
        ("gone\n", "", [((0, 0, 1, 0), "")]),
    ],
)
def test_a_last_line_without_newline(old: str, new: str, expected: list[tuple[tuple[int, int, int, int], str]]) -> None:
    edits = minimal_edits(old, new)
    assert [(_range(e), e.new_text) for e in edits] == expected
    assert apply(old, edits) == new


def test_a_large_file_with_one_changed_line_is_one_edit_on_that_line() -> None:
    old = "".join(f"line {i}\n" for i in range(5000))
    new = old.replace("line 2500\n", "line 2500 changed\n")
    edits = minimal_edits(old, new)
    assert [(_range(e), e.new_text) for e in edits] == [((2500, 9, 2500, 9), " changed")]


@settings(max_examples=300, deadline=None)
@given(old=TEXT, new=TEXT, encoding=st.sampled_from(ENCODINGS))
def test_the_review_edit_is_one_block_of_whole_lines_that_gives_new(old: str, new: str, encoding: str) -> None:
    edits = minimal_edits(old, new, encoding, whole_lines=True)
    assert apply(old, edits, encoding) == new
    assert len(edits) <= 1
    assert all(e.range.start.character == 0 for e in edits)


def test_the_review_edit_of_a_word_in_one_line_is_that_line() -> None:
    old = "a\nport = 9090\nb\n"
    (edit,) = minimal_edits(old, old.replace("9090", "7070"), whole_lines=True)
    assert _range(edit) == (1, 0, 2, 0) and edit.new_text == "port = 7070\n"
