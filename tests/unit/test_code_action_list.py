"""Code actions: the list is cheap (no model, no document or disk read), titles are one short line."""

from __future__ import annotations

import time
from pathlib import Path

from lsprotocol import types as t

from forge_lsp.lsp.code_actions import code_actions, one_line

LINES = 5_000


def params(diagnostics: list[t.Diagnostic], end_line: int) -> t.CodeActionParams:
    return t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri="file:///project/big.py"),
        range=t.Range(start=t.Position(line=0, character=0), end=t.Position(line=end_line, character=0)),
        context=t.CodeActionContext(diagnostics=diagnostics),
    )


def diagnostic(line: int, source: str) -> t.Diagnostic:
    return t.Diagnostic(
        range=t.Range(start=t.Position(line=line, character=0), end=t.Position(line=line, character=8)),
        message=f"Name 'x{line}' is not defined\n  see the docs",
        source=source,
        code="reportUndefinedVariable",
    )


def test_listing_for_a_5000_line_file_with_diagnostics_takes_under_5_ms() -> None:
    # A whole-file selection of a 5,000-line file with a diagnostic on every line: the worst a client sends.
    every_line = [diagnostic(n, "forge" if n % 2 else "pyright") for n in range(LINES)]
    request = params(every_line, LINES)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        found = code_actions(request, [Path("/elsewhere"), Path("/project")])
        best = min(best, time.perf_counter() - start)
    assert best < 0.005, f"listing took {best * 1000:.2f} ms"
    titles = [a.title for a in found]
    assert titles[:2] == ["Forge: Fix Name 'x0' is not defined", "Forge: Fix Name 'x2' is not defined"]
    assert titles[-2:] == ["Forge: Explain", "Forge: Edit selection…"]
    assert all(a.command is None and a.edit is None for a in found)  # resolve builds them


def test_a_title_is_the_first_line_cut_short() -> None:
    assert one_line("  \nfirst   line\nsecond") == "first line"
    cut = one_line("x" * 100)
    assert len(cut) == 60 and cut.endswith("…")


def test_an_untitled_buffer_gets_no_actions() -> None:
    request = params([diagnostic(0, "eslint")], 3)
    request.text_document.uri = "untitled:Untitled-1"
    assert code_actions(request) == []


def test_a_file_outside_the_workspace_folders_gets_no_actions() -> None:
    request = params([diagnostic(0, "eslint")], 3)
    assert code_actions(request, [Path("/other")]) == []
    assert len(code_actions(request, [Path("/project")])) == 3


def test_unsaved_changes_skip_what_cannot_be_compared_and_name_a_huge_buffer(tmp_path: Path) -> None:
    from forge_lsp.lsp.selection import MAX_DIFFED_CHARS, _unsaved_changes

    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01" * 100)
    huge = tmp_path / "huge.txt"
    huge.write_text("a\n" * (MAX_DIFFED_CHARS // 2 + 1))
    small = tmp_path / "small.txt"
    small.write_text("one\n")
    found = dict(_unsaved_changes([("blob.bin", binary, "text now"), ("huge.txt", huge, "b\n"), ("small.txt", small, "two\n")]))
    assert set(found) == {"huge.txt", "small.txt"}  # the binary file cannot be compared: not named
    assert "too large to show its changes" in found["huge.txt"]
    assert "-one\n+two\n" in found["small.txt"]


def test_unsaved_changes_leave_secrets_out(tmp_path: Path) -> None:
    from forge_lsp.lsp.selection import _unsaved_changes

    env = tmp_path / ".env"
    env.write_text("DEBUG=1\n")
    ((_, diff),) = _unsaved_changes([(".env", env, "DEBUG=1\nOPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345\n")])
    assert "+OPENAI_API_KEY=[REDACTED]" in diff and "abcdefghij" not in diff


def test_a_fix_prompt_cuts_a_very_long_message(tmp_path: Path) -> None:
    import asyncio
    from types import SimpleNamespace

    from forge_lsp.lsp.code_actions import MAX_MESSAGE_CHARS, fix_prompt

    src = tmp_path / "t.py"
    src.write_text("def test():\n    assert 1 == 2\n")
    ls = SimpleNamespace(roots=lambda: [tmp_path], workspace=SimpleNamespace(text_documents={}), log=lambda *a: None)
    diag = diagnostic(1, "pytest")
    diag.message = "AssertionError\n" + "x" * (MAX_MESSAGE_CHARS * 3)
    prompt = asyncio.run(fix_prompt(ls, src.as_uri(), diag))  # type: ignore[arg-type]
    assert prompt.startswith("Fix this problem in t.py at line 2, column 1 (source: pytest, code: reportUndefinedVariable)")
    assert " … (cut)" in prompt and len(prompt) < MAX_MESSAGE_CHARS + 1_000
    assert "> 2 |     assert 1 == 2" in prompt
