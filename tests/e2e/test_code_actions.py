"""Code actions and the editor's context in a turn, end to end (the server in a subprocess, the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from conftest import write_script

pytestmark = pytest.mark.timeout(60)

APP = "const a: number = 1;\nlet total: number = 'x';\nconsole.log(a, total);\n"


@pytest.fixture(autouse=True)
def record_events(client: LanguageClient) -> None:
    client.forge_events = []  # type: ignore[attr-defined]

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        client.forge_events.append(params)  # type: ignore[attr-defined]


def started(client: LanguageClient) -> list[Any]:
    return [e for e in client.forge_events if e.type == "turnStarted"]  # type: ignore[attr-defined]


def open_text(client: LanguageClient, path: Path, text: str, language: str = "typescript") -> None:
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=path.as_uri(), language_id=language, version=1, text=text)
        )
    )


def rng(l1: int, c1: int, l2: int, c2: int) -> t.Range:
    return t.Range(start=t.Position(line=l1, character=c1), end=t.Position(line=l2, character=c2))


def foreign(source: str = "ts", code: str | int = 2322) -> t.Diagnostic:
    return t.Diagnostic(
        range=rng(1, 4, 1, 9),
        message="Type 'string' is not assignable to type 'number'.\n  The expected type comes from here.",
        severity=t.DiagnosticSeverity.Error,
        source=source,
        code=code,
    )


async def actions(client: LanguageClient, path: Path, where: t.Range, *diagnostics: t.Diagnostic) -> list[t.CodeAction]:
    result = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=path.as_uri()),
            range=where,
            context=t.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    return [a for a in result or [] if isinstance(a, t.CodeAction)]


async def run_command(client: LanguageClient, cmd: t.Command) -> Any:
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=cmd.command, arguments=cmd.arguments))


def transcript(ws: Path, turn_id: str) -> str:
    return (ws / ".forge" / "transcripts" / f"{turn_id}.md").read_text()


async def test_capability_is_registered_with_resolve(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    provider = caps.code_action_provider
    assert isinstance(provider, t.CodeActionOptions) and provider.resolve_provider is True
    assert t.CodeActionKind.QuickFix in (provider.code_action_kinds or [])


@pytest.mark.parametrize("source", ["ts", "pyright", "eslint"])
async def test_fix_on_a_foreign_diagnostic_is_listed_resolved_and_runs_a_turn(
    client: LanguageClient, ws: Path, source: str
) -> None:
    app = ws / "app.ts"
    app.write_text(APP)
    open_text(client, app, APP)
    diag = foreign(source, "no-bad-type" if source == "eslint" else 2322)
    listed = await actions(client, app, rng(1, 4, 1, 4), diag)
    # An empty range (the cursor): only the fix, no selection actions.
    assert [a.title for a in listed] == ["Forge: Fix Type 'string' is not assignable to type 'number'."]
    (fix,) = listed
    assert fix.kind == t.CodeActionKind.QuickFix and list(fix.diagnostics or []) == [diag]
    assert fix.command is None and fix.edit is None  # the list is cheap: resolve builds the command
    resolved = await client.code_action_resolve_async(fix)
    assert resolved.command is not None and resolved.command.command == "forge.run"
    (arg,) = resolved.command.arguments or []
    assert arg["uri"] == app.as_uri() and arg["range"] == {
        "start": {"line": 1, "character": 4},
        "end": {"line": 1, "character": 9},
    }
    prompt = arg["prompt"]
    assert "app.ts" in prompt and "line 2" in prompt
    assert "Type 'string' is not assignable to type 'number'." in prompt and "The expected type comes from here." in prompt
    assert f"source: {source}" in prompt and str(diag.code) in prompt
    # The code around it, numbered, the problem's line marked.
    assert "1 | const a: number = 1;" in prompt and "> 2 | let total: number = 'x';" in prompt and "3 | console.log" in prompt
    write_script(ws, {"text": "fixed"})
    result = await run_command(client, resolved.command)
    assert result["status"] == "completed"
    (turn,) = started(client)
    assert "not assignable" in turn.prompt and f"source: {source}" in turn.prompt
    text = transcript(ws, result["turnId"])
    assert "## Context" in text and "- file: app.ts" in text and "- range: line 2" in text


async def test_forge_own_diagnostics_get_no_fix(client: LanguageClient, ws: Path) -> None:
    app = ws / "app.ts"
    app.write_text(APP)
    open_text(client, app, APP)
    own = t.Diagnostic(range=rng(1, 0, 1, 3), message="patch failed (3 times this turn)", source="forge", code="tool-retry")
    listed = await actions(client, app, rng(1, 0, 1, 0), own, foreign())
    assert [a.title for a in listed] == ["Forge: Fix Type 'string' is not assignable to type 'number'."]


async def test_a_long_message_is_one_short_line_in_the_title(client: LanguageClient, ws: Path) -> None:
    app = ws / "app.ts"
    app.write_text(APP)
    long = t.Diagnostic(range=rng(0, 0, 0, 1), message="word " * 40 + "\nsecond line", source="mypy")
    (fix,) = await actions(client, app, rng(0, 0, 0, 0), long)
    assert "\n" not in fix.title and len(fix.title) <= 80 and fix.title.endswith("…")


async def test_selection_actions_explain_and_edit(client: LanguageClient, ws: Path) -> None:
    app = ws / "app.ts"
    app.write_text(APP)
    open_text(client, app, APP)
    listed = await actions(client, app, rng(0, 0, 1, 10))
    assert [(a.title, a.kind) for a in listed] == [
        ("Forge: Explain", None),
        ("Forge: Edit selection…", t.CodeActionKind.RefactorRewrite),
    ]
    explain = await client.code_action_resolve_async(listed[0])
    assert explain.command is not None and explain.command.command == "forge.run"
    (arg,) = explain.command.arguments or []
    assert arg["uri"] == app.as_uri() and arg["range"]["end"] == {"line": 1, "character": 10}
    edit = await client.code_action_resolve_async(listed[1])
    # The client asks the user for the instruction (VS Code's input box, Neovim's vim.ui.input).
    assert edit.command is not None and edit.command.command == "forge.editSelection"
    assert list(edit.command.arguments or []) == [{"uri": app.as_uri(), "range": arg["range"]}]
    write_script(ws, {"text": "It declares two numbers."})
    result = await run_command(client, explain.command)
    (turn,) = started(client)
    assert turn.prompt.startswith("Explain") and "selected lines 1-2 of app.ts" in turn.prompt
    assert result["text"] == "It declares two numbers."
    # Asked for refactors only: no Explain.
    only = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=app.as_uri()),
            range=rng(0, 0, 1, 10),
            context=t.CodeActionContext(diagnostics=[foreign()], only=[t.CodeActionKind.Refactor]),
        )
    )
    assert [a.title for a in only or []] == ["Forge: Edit selection…"]


async def test_bad_code_action_input_is_refused_not_a_crash(client: LanguageClient, ws: Path) -> None:
    from pygls.exceptions import JsonRpcException

    app = ws / "app.ts"
    app.write_text(APP)
    bogus = t.CodeAction(title="Forge: Fix x", data={"forge": "fix", "uri": "file:///nowhere/x.ts"})
    with pytest.raises(JsonRpcException, match="diagnostic"):
        await client.code_action_resolve_async(bogus)
    # Someone else's action comes back as it was.
    other = t.CodeAction(title="Organize imports", data={"theirs": 1})
    assert (await client.code_action_resolve_async(other)).title == "Organize imports"
    listed = await actions(client, app, rng(0, 0, 0, 0), foreign())
    assert len(listed) == 1
    # A file outside the workspace folders: no turn can run there, so no action is offered.
    outside = ws.parent / "elsewhere.ts"
    outside.write_text(APP)
    assert await actions(client, outside, rng(0, 0, 1, 0), foreign()) == []


async def test_context_of_a_turn_active_file_selection_and_unsaved_buffers(client: LanguageClient, ws: Path) -> None:
    a, b, c = ws / "a.py", ws / "b.py", ws / "c.py"
    a.write_text("x = 1\ny = 2\nz = 3\n")
    b.write_text("def f():\n    return 1\n")
    c.write_text("clean = True\n")
    open_text(client, a, "x = 1\ny = 20\nz = 3\n", "python")  # unsaved: y changed
    open_text(client, b, "def f():\n    return 2\n", "python")  # unsaved
    open_text(client, c, "clean = True\n", "python")  # as saved
    new = ws / "new.py"
    open_text(client, new, "print('not saved yet')\n", "python")  # never saved
    write_script(ws, {"tool_calls": [{"name": "read", "arguments": {"file_path": "b.py"}}]}, {"text": "seen"})
    rng_a = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 6}}
    result = await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": "why y?", "uri": a.as_uri(), "range": rng_a}])
    )
    (turn,) = started(client)
    prompt = turn.prompt
    # The selection as the editor has it, not the disk's.
    assert "selected lines 2-2 of a.py" in prompt and "y = 20" in prompt
    # The unsaved buffers, named with what differs from the saved file; a clean one is not.
    assert "a.py, b.py, new.py" in prompt and "c.py" not in prompt
    assert "-    return 1\n+    return 2" in prompt and "+print('not saved yet')" in prompt
    assert turn.context.file == "a.py" and list(turn.context.unsaved) == ["a.py", "b.py", "new.py"]
    assert (turn.context.range.start.line, turn.context.range.end.character) == (1, 6)
    # The read tool read the editor's text of b.py.
    finished = [e for e in client.forge_events if e.type == "toolCallFinished"]  # type: ignore[attr-defined]
    assert "return 2" in finished[0].output
    # The log has the user's own prompt and the context as one line, not the diffs.
    from test_lsp import until

    await until(lambda: any(m.message.startswith("▶ turn") for m in client.log_messages))
    (started_line,) = [m.message for m in client.log_messages if m.message.startswith("▶ turn")]
    assert started_line.endswith("\n  prompt: why y?\n  context: a.py (line 2); unsaved in the editor: a.py, b.py, new.py")
    text = transcript(ws, result["turnId"])
    section = text[text.index("## Context") : text.index("## Prompt")]
    assert "- file: a.py" in section and "- range: line 2" in section
    assert "- unsaved in the editor: a.py, b.py, new.py" in section


async def test_a_turn_without_editor_context_has_no_context_section(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "ok"})
    result = await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": "hi"}])
    )
    (turn,) = started(client)
    assert turn.prompt == "hi" and not getattr(turn, "context", None)
    assert "## Context" not in transcript(ws, result["turnId"])
