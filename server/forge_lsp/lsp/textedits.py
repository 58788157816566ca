"""The smallest set of LSP TextEdits that turns one text into another (pure: no server, no I/O).

An edit sent as one whole-document replacement makes the editor move the
cursor, marks, folds, breakpoints and signs of every line; edits that touch
only what changed leave the rest where it was. The diff is difflib's, by lines,
then by characters inside a line that changed into one line. Positions count
in the negotiated position encoding (UTF-16 code units unless the client chose
otherwise); lines end at \\n, \\r\\n or \\r as in LSP, and no edit starts or ends
between the \\r and \\n of a line ending.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from difflib import SequenceMatcher

from lsprotocol import types as t

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_ENDING = re.compile(r"(?:\r\n|\r|\n)\Z")

MAX_DIFF_LINES = 20_000
"""Past this many differing lines on each side, the changed block is one edit (difflib is quadratic)."""
MAX_DIFF_CHARS = 4_000
"""A line longer than this is narrowed by its common prefix and suffix only, not diffed by characters."""


def split_lines(text: str) -> list[str]:
    """The lines of text as LSP counts them, each with its line ending (the last one may have none)."""
    return _LINE.findall(text)


def _units(text: str, encoding: str) -> int:
    if encoding == t.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == t.PositionEncodingKind.Utf32:
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _split_content(line: str) -> tuple[str, str]:
    ending = _ENDING.search(line)
    return (line[: ending.start()], ending.group()) if ending else (line, "")


def _char_edits(old: str, new: str, base: int) -> list[tuple[int, int, str]]:
    """Edits (offsets into the whole old text) turning old into new, two texts without a line ending."""
    if len(old) > MAX_DIFF_CHARS or len(new) > MAX_DIFF_CHARS:
        return _narrowed(old, new, base)
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return [(base + i1, base + i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _narrowed(old: str, new: str, base: int) -> list[tuple[int, int, str]]:
    """One edit: old replaced by new less their common prefix and suffix, never splitting a \\r\\n."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    cut = len(old) - end
    if 0 < cut < len(old) and old[cut - 1] == "\r" and old[cut] == "\n":
        end -= 1
    old_end, new_end = len(old) - end, len(new) - end
    if start == old_end and start == new_end:
        return []
    return [(base + start, base + old_end, new[start:new_end])]


def _block_edits(old_lines: list[str], new_lines: list[str], base: int) -> list[tuple[int, int, str]]:
    """Edits for a block of old lines replaced by new lines: line by line when the counts match."""
    if len(old_lines) != len(new_lines):
        return _narrowed("".join(old_lines), "".join(new_lines), base)
    edits: list[tuple[int, int, str]] = []
    for old_line, new_line in zip(old_lines, new_lines, strict=True):
        old_content, old_ending = _split_content(old_line)
        new_content, new_ending = _split_content(new_line)
        edits += _char_edits(old_content, new_content, base)
        if old_ending != new_ending:
            end = base + len(old_content)
            edits.append((end, end + len(old_ending), new_ending))
        base += len(old_line)
    return edits


def offset_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """The minimal edits as (start, end, new text), offsets in code points of old, in order, not overlapping."""
    if old == new:
        return []
    old_lines, new_lines = split_lines(old), split_lines(new)
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < min(len(old_lines), len(new_lines)) - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    old_mid = old_lines[head : len(old_lines) - tail]
    new_mid = new_lines[head : len(new_lines) - tail]
    base = sum(map(len, old_lines[:head]))
    if len(old_mid) > MAX_DIFF_LINES or len(new_mid) > MAX_DIFF_LINES:
        return _narrowed("".join(old_mid), "".join(new_mid), base)
    starts = [base]
    for line in old_mid:
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    matcher = SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            edits.append((starts[i1], starts[i1], "".join(new_mid[j1:j2])))
        elif tag == "delete":
            edits.append((starts[i1], starts[i2], ""))
        else:
            edits += _block_edits(old_mid[i1:i2], new_mid[j1:j2], starts[i1])
    return edits


def one_block(old: str, new: str) -> list[tuple[int, int, str]]:
    """At most one edit: the whole lines from the first changed one to the last (a review's all or nothing).

    A review that offers each small edit on its own (VS Code's Refactor Preview has a checkbox per
    edit) would let a part of the agent's change land; one block per file cannot be split, and the
    lines around it are still untouched.
    """
    edits = offset_edits(old, new)
    if not edits:
        return []
    start, end = edits[0][0], edits[-1][1]
    lines = split_lines(old)
    offset = 0
    for line in lines:
        if offset <= start < offset + len(line):
            start = offset
        if offset < end <= offset + len(line) and end != offset:
            end = offset + len(line)
        offset += len(line)
    if start == len(old) and lines and _ENDING.search(lines[-1]) is None:
        start -= len(lines[-1])  # text added to a last line without a line ending: that whole line
    tail = len(old) - end
    return [(start, end, new[start : len(new) - tail])]


def minimal_edits(
    old: str, new: str, encoding: str = t.PositionEncodingKind.Utf16, *, whole_lines: bool = False
) -> list[t.TextEdit]:
    """The TextEdits, against old, that make new; positions in the given encoding (LSP's default UTF-16).

    whole_lines: one edit over the changed lines instead of the smallest ones (for review).
    """
    edits = one_block(old, new) if whole_lines else offset_edits(old, new)
    if not edits:
        return []
    lines = split_lines(old)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))
    open_end = bool(lines) and _ENDING.search(lines[-1]) is None

    def position(offset: int) -> t.Position:
        row = bisect_right(line_starts, offset) - 1
        if row == len(lines) and open_end:
            row -= 1  # the end of a last line without a line ending
        if row >= len(lines):
            return t.Position(line=len(lines), character=0)
        return t.Position(line=row, character=_units(old[line_starts[row] : offset], encoding))

    return [t.TextEdit(range=t.Range(start=position(a), end=position(b)), new_text=text) for a, b, text in edits]
