"""Applying LSP TextEdits to a text as an editor does, for tests of the edits the server sends."""

from __future__ import annotations

from lsprotocol import types as t

from forge_lsp.lsp.textedits import split_lines


def _offset(lines: list[str], position: t.Position, encoding: str) -> int:
    """A position as a code point offset of the text, counting units of the encoding, as an editor reads it."""
    if position.line >= len(lines):
        return sum(map(len, lines))
    line = lines[position.line]
    start = sum(map(len, lines[: position.line]))
    units = 0
    for i, c in enumerate(line):
        if units == position.character:
            return start + i
        assert units < position.character, "a position inside a character"
        if encoding == t.PositionEncodingKind.Utf8:
            units += len(c.encode("utf-8"))
        elif encoding == t.PositionEncodingKind.Utf16:
            units += 2 if ord(c) > 0xFFFF else 1
        else:
            units += 1
    assert units == position.character, "a position past the end of its line"
    return start + len(line)


def apply(old: str, edits: list[t.TextEdit], encoding: str = t.PositionEncodingKind.Utf16) -> str:
    """LSP's rule: every range is of the old text; edits must not overlap."""
    lines = split_lines(old)
    spans = [(_offset(lines, e.range.start, encoding), _offset(lines, e.range.end, encoding), e.new_text) for e in edits]
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        assert end <= start, "edits overlap or are out of order"
    for start, end, _ in spans:
        for cut in (start, end):
            assert not (0 < cut < len(old) and old[cut - 1] == "\r" and old[cut] == "\n"), "a cut inside \\r\\n"
    out = old
    for start, end, text in reversed(spans):
        out = out[:start] + text + out[end:]
    return out
