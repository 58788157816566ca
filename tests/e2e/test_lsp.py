"""The LSP contract end to end: the server in a real subprocess, the scripted model."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from forge_lsp.lsp.server import COMMANDS

from conftest import shell, write_script

pytestmark = pytest.mark.timeout(60)


async def command(client: LanguageClient, name: str, arg: Any = None, **kw: Any) -> Any:
    args = [arg] if arg is not None else []
    return await client.workspace_execute_command_async(t.ExecuteCommandParams(command=name, arguments=args, **kw))


def events(client: LanguageClient) -> list[Any]:
    return client.forge_events  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(autouse=True)
def record_events(client: LanguageClient) -> None:
    client.forge_events = []  # type: ignore[attr-defined]

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        client.forge_events.append(params)  # type: ignore[attr-defined]


async def until(condition: Any, timeout: float = 30.0) -> None:
    """Wait for a condition on what the client received (notifications arrive on their own time)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def open_document(client: LanguageClient, path: Path) -> None:
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=path.read_text())
        )
    )


def config_changed(client: LanguageClient, path: Path) -> None:
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(changes=[t.FileEvent(uri=path.as_uri(), type=t.FileChangeType.Changed)])
    )


def transcript_uri(ws: Path, turn_id: str) -> str:
    return (ws / ".forge" / "transcripts" / f"{turn_id}.md").as_uri()


async def test_initialize_advertises_commands(client: LanguageClient) -> None:
    result: t.InitializeResult = client.init_result  # type: ignore[attr-defined]
    assert result.server_info is not None and result.server_info.name == "forge-lsp"
    provider = result.capabilities.execute_command_provider
    assert provider is not None and list(provider.commands) == list(
        COMMANDS
    )  # the table's, in its order (test_command_table: the contract's)
    status = await command(client, "forge.status", {})
    assert status["running"] is False and status["limit"] == 3 and status["model"] == "scripted/script.json"


async def test_run_returns_summary_with_events_progress_and_logs(client: LanguageClient, ws: Path) -> None:
    (ws / "a.txt").write_text("hello\n")
    write_script(
        ws,
        {"text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}]},
        {"text": "It says hello."},
    )
    result = await command(client, "forge.run", {"prompt": "what is in a.txt?"})
    assert result["status"] == "completed"
    assert (result["requests"], result["toolCalls"], result["failures"]) == (2, 1, 0)
    assert result["text"] == "Reading.\n\nIt says hello."
    assert set(result) == {
        "turnId",
        "conversationId",
        "status",
        "requests",
        "toolCalls",
        "failures",
        "filesChanged",
        "repliesCut",
        "text",
        "usage",
    }
    types = [e.type for e in events(client)]
    assert types[0] == "turnStarted" and types[-1] == "turnFinished"
    assert {"assistantText", "toolCallStarted", "toolCallFinished"} <= set(types)
    assert all(e.turnId == result["turnId"] for e in events(client))
    finished = [e for e in events(client) if e.type == "toolCallFinished"][0]
    assert finished.tool == "read" and finished.ok is True and "1:hello" in finished.output
    assert any("→ read: a.txt" in m.message for m in client.log_messages)
    (reports,) = client.progress_reports.values()
    assert isinstance(reports[0], t.WorkDoneProgressBegin) and reports[0].title == "Forge"
    assert any(isinstance(r, t.WorkDoneProgressReport) and r.message == "read: a.txt" for r in reports)
    assert isinstance(reports[-1], t.WorkDoneProgressEnd) and reports[-1].message == "completed"


@pytest.mark.filterwarnings("ignore:Unknown progress token")
async def test_client_work_done_token_is_used(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "hi"})
    await command(client, "forge.run", {"prompt": "hi"}, work_done_token="my-token")
    assert "my-token" in client.progress_reports
    assert isinstance(client.progress_reports["my-token"][-1], t.WorkDoneProgressEnd)


@pytest.mark.litellm  # the main job as a user runs it: through litellm's path
async def test_retries_and_interrupt_as_diagnostics_and_notifications(client: LanguageClient, ws: Path) -> None:
    client.answers.answer = None  # type: ignore[attr-defined]
    write_script(ws, shell("exit 1"), shell("exit 2"), shell("exit 3"))
    result = await command(client, "forge.run", {"prompt": "break things"})
    assert result["status"] == "interrupted"
    assert result["reason"] == {"kind": "MaxToolFailurePerTurnLimitReached", "limit": 3, "errors": {"shell": 3}}
    uri = transcript_uri(ws, result["turnId"])
    diags = client.diagnostics[uri]
    warnings = [d for d in diags if d.severity == t.DiagnosticSeverity.Warning]
    errors = [d for d in diags if d.severity == t.DiagnosticSeverity.Error]
    assert [d.code for d in warnings] == ["tool-retry"] * 3
    assert all(d.source == "forge" for d in diags)
    assert [d.message for d in warnings] == [
        "shell failed: command exited with code 1 (attempts remaining: 2 of 3)",
        "shell failed: command exited with code 2 (attempts remaining: 1 of 3)",
        "shell failed: command exited with code 3 (attempts remaining: 0 of 3)",
    ]
    lines = (ws / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text().splitlines()
    assert all(lines[d.range.start.line].startswith("### Tool call: shell") for d in warnings)
    (error,) = errors
    assert error.code == "max-tool-failure-per-turn"
    assert lines[error.range.start.line] == "## Interrupted: MaxToolFailurePerTurnLimitReached"
    retry_events = [e for e in events(client) if e.type == "retry"]
    assert [(e.tool, e.attemptsLeft, e.limit) for e in retry_events] == [("shell", 2, 3), ("shell", 1, 3), ("shell", 0, 3)]
    assert retry_events[0].notice.startswith("Tool call failed\n- **Attempts remaining:** 2")
    (interrupt,) = [e for e in events(client) if e.type == "interrupt"]
    assert interrupt.reason.kind == "MaxToolFailurePerTurnLimitReached" and interrupt.reason.limit == 3
    # The interrupt reaches the user once: as the Continue request (no showMessage besides).
    await until(lambda: len(client.answers.requests) == 1)  # type: ignore[attr-defined]
    (offer,) = client.answers.requests  # type: ignore[attr-defined]
    assert offer.type == t.MessageType.Warning and "Maximum tool failure limit (3)" in offer.message
    assert [a.title for a in offer.actions or []] == ["Continue"]
    assert not any("Maximum tool failure limit" in m.message for m in client.messages)
    (reports,) = client.progress_reports.values()
    messages = [r.message for r in reports if isinstance(r, t.WorkDoneProgressReport)]
    assert messages == [
        "shell: exit 1",
        "retry 2/3 shell",
        "shell: exit 2",
        "retry 1/3 shell",
        "shell: exit 3",
        "retry 0/3 shell",
    ]
    await until(lambda: client.answers.requests)  # type: ignore[attr-defined]
    (offer,) = client.answers.requests  # type: ignore[attr-defined]
    assert [a.title for a in offer.actions or []] == ["Continue"]
    status = await command(client, "forge.status", {})
    assert status["errors"] == {"shell": 3}
    assert status["modelLibraryLoaded"]  # the requests went through litellm (@pytest.mark.litellm)


async def test_a_file_the_tool_kept_failing_on_gets_one_warning_and_the_error(client: LanguageClient, ws: Path) -> None:
    client.answers.answer = None  # type: ignore[attr-defined]
    (ws / "src.py").write_text("x = 1\n")
    patch = {
        "tool_calls": [{"name": "patch", "arguments": {"file_path": "src.py", "old_string": "y = 2", "new_string": "y = 3"}}]
    }
    write_script(ws, patch, patch, patch)
    result = await command(client, "forge.run", {"prompt": "patch"})
    assert result["status"] == "interrupted"
    # The transcript keeps one warning per failed call and its own Error.
    transcript = client.diagnostics[transcript_uri(ws, result["turnId"])]
    assert [d.code for d in transcript] == ["tool-retry"] * 3 + ["max-tool-failure-per-turn"]
    # The file: one warning that counts the failures there, and the Error where the failures were.
    diags = sorted(client.diagnostics[(ws / "src.py").as_uri()], key=lambda d: d.severity)
    assert [(d.code, d.severity, d.range.start.line) for d in diags] == [
        ("max-tool-failure-per-turn", t.DiagnosticSeverity.Error, 0),
        ("tool-retry", t.DiagnosticSeverity.Warning, 0),
    ]
    error, warning = diags
    assert error.message.startswith("Maximum tool failure limit (3) reached for this turn: patch (3)")
    assert warning.message.startswith("patch failed (3 times this turn): old_string not found in src.py")
    assert warning.message.endswith("(attempts remaining: 0 of 3)")
    assert warning.data["failures"] == 3


async def test_a_failure_the_turn_then_made_good_leaves_the_file_and_stays_in_the_transcript(
    client: LanguageClient, ws: Path
) -> None:
    """A patch fails, a later patch of the same file succeeds: the file's "patch failed ... attempts remaining 2 of
    3" Warning goes (it stayed after the turn completed); one the turn never made good stays: a read of b.py is no
    fix of a failed patch there, and a write of a.py makes good a failed read of it, in the same batch too."""
    (ws / "src.py").write_text("x = 1\n")
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")

    def patch(path: str, old: str, new: str) -> dict[str, Any]:
        return {"name": "patch", "arguments": {"file_path": path, "old_string": old, "new_string": new}}

    def read(path: str, start: int = 1) -> dict[str, Any]:
        return {"name": "read", "arguments": {"file_path": path, "start_line": start}}

    write_script(
        ws,
        {"tool_calls": [patch("src.py", "y = 1", "y = 2")]},
        {"tool_calls": [patch("src.py", "x = 1", "x = 2")]},
        {"tool_calls": [patch("b.py", "c = 1", "c = 2"), read("b.py")]},
        {
            "tool_calls": [
                read("a.py", 50),
                {"name": "write", "arguments": {"file_path": "a.py", "content": "a = 2\n", "overwrite": True}},
            ]
        },
        {"text": "Fixed."},
    )
    result = await command(client, "forge.run", {"prompt": "fix it"})
    assert result["status"] == "completed" and result["failures"] == 3, result
    assert (ws / "src.py").read_text() == "x = 2\n"
    transcript = client.diagnostics[transcript_uri(ws, result["turnId"])]
    assert [d.code for d in transcript] == ["tool-retry"] * 3  # the transcript keeps every failure
    assert list(client.diagnostics.get((ws / "src.py").as_uri(), [])) == []
    assert list(client.diagnostics.get((ws / "a.py").as_uri(), [])) == []
    (left,) = client.diagnostics[(ws / "b.py").as_uri()]
    assert left.code == "tool-retry" and left.message.startswith("patch failed: old_string not found in b.py"), left.message


async def test_failed_file_tool_is_published_on_the_file_and_cleared_next_turn(client: LanguageClient, ws: Path) -> None:
    (ws / "src.py").write_text("x = 1\n")
    patch = {
        "tool_calls": [{"name": "patch", "arguments": {"file_path": "src.py", "old_string": "y = 2", "new_string": "y = 3"}}]
    }
    write_script(ws, patch, {"text": "sorry"}, {"text": "second turn"})
    first = await command(client, "forge.run", {"prompt": "patch"})
    file_diags = client.diagnostics[(ws / "src.py").as_uri()]
    assert [d.code for d in file_diags] == ["tool-retry"]
    assert "patch failed: old_string not found in src.py" in file_diags[0].message
    second = await command(client, "forge.run", {"prompt": "again"})
    assert second["status"] == "completed"
    assert list(client.diagnostics[(ws / "src.py").as_uri()]) == []
    assert list(client.diagnostics[transcript_uri(ws, first["turnId"])]) == []


async def test_continue_runs_a_new_turn_with_fresh_tracker(client: LanguageClient, ws: Path) -> None:
    client.answers.answer = "Continue"  # type: ignore[attr-defined]
    write_script(ws, shell("exit 1"), shell("exit 1; #2"), shell("exit 1; #3"), shell("exit 1; #4"), {"text": "recovered"})
    result = await command(client, "forge.run", {"prompt": "go"})
    assert result["status"] == "interrupted"
    await until(lambda: len([e for e in events(client) if e.type == "turnFinished"]) == 2)
    finished = [e for e in events(client) if e.type == "turnFinished"]
    assert [f.status for f in finished] == ["interrupted", "completed"]
    retries = [e.attemptsLeft for e in events(client) if e.type == "retry"]
    assert retries == [2, 1, 0, 2]  # the continuation starts from a fresh tracker


async def test_cancel_stops_turn_and_kills_shell(client: LanguageClient, ws: Path) -> None:
    write_script(ws, shell("sleep 30; echo late > late.txt"), {"text": "never"})
    task = asyncio.ensure_future(command(client, "forge.run", {"prompt": "slow"}))
    await until(lambda: any(e.type == "toolCallStarted" for e in events(client)))
    second = await asyncio.gather(command(client, "forge.run", {"prompt": "another"}), return_exceptions=True)
    assert isinstance(second[0], JsonRpcException) and "already running" in str(second[0])
    assert "cancel it with forge.cancel (Forge: Cancel, :ForgeCancel) first" in str(second[0])  # an unknown client's words
    started = time.monotonic()
    answer = await command(client, "forge.cancel", {})
    # What was stopped, from the server (not guessed by an editor from the events it saw), once the turn ended.
    (turn,) = [e.turnId for e in events(client) if e.type == "turnStarted"]
    assert answer == {
        "cancelled": True,
        "turnId": turn,
        "stopped": "the running shell command was killed (sleep 30; echo late > late.txt)",
    }
    assert [e.status for e in events(client) if e.type == "turnFinished"] == ["cancelled"]  # before the answer
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 1.0
    assert result["status"] == "cancelled"
    await asyncio.sleep(0.3)
    assert not (ws / "late.txt").exists()
    assert (await command(client, "forge.status", {}))["running"] is False


async def test_cancel_while_the_model_answers_says_that_its_reply_was_stopped(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"tool_calls": [{"name": "todo_read", "arguments": {}}]}, {"delay_ms": 30000, "text": "late"})
    task = asyncio.ensure_future(command(client, "forge.run", {"prompt": "slow model"}))
    await until(lambda: any(e.type == "toolCallFinished" for e in events(client)))  # the second request is out
    answer = await command(client, "forge.cancel", {})
    assert answer["cancelled"] is True and answer["stopped"] == "the model's reply was stopped", answer
    assert (await asyncio.wait_for(task, 5))["status"] == "cancelled"
    assert await command(client, "forge.cancel", {}) == {"cancelled": False}  # nothing runs now


async def test_cancel_request_stops_the_turn(client: LanguageClient, ws: Path) -> None:
    write_script(ws, shell("sleep 30"), {"text": "never"})
    client.protocol.send_request(
        t.WORKSPACE_EXECUTE_COMMAND, t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": "slow"}]), msg_id="run-1"
    )
    await until(lambda: any(e.type == "toolCallStarted" for e in events(client)))
    started = time.monotonic()
    client.cancel_request(t.CancelParams(id="run-1"))
    await until(lambda: any(e.type == "turnFinished" for e in events(client)))
    assert time.monotonic() - started < 1.0
    (finished,) = [e for e in events(client) if e.type == "turnFinished"]
    assert finished.status == "cancelled"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "needs {prompt: string}"),
        (["just a string"], "one object argument"),
        ([{"prompt": 42}], "needs {prompt: string}"),
        ([{"prompt": "x", "model": 5}], "model must be"),
        ([{"prompt": "x" * 300_000}], "over the 200000-character limit"),
        ([{"prompt": "x", "uri": "file:///somewhere/else.py"}], "not inside a workspace folder"),
    ],
)
async def test_malformed_requests_get_errors_and_server_keeps_serving(
    client: LanguageClient, args: list[Any], needle: str
) -> None:
    with pytest.raises(JsonRpcException) as info:
        await client.workspace_execute_command_async(t.ExecuteCommandParams(command="forge.run", arguments=args))
    assert needle in str(info.value)
    with pytest.raises(JsonRpcException, match="not defined"):
        await command(client, "forge.nope", {})
    assert (await command(client, "forge.status", {}))["running"] is False


async def test_workspace_config_sources_and_bad_config_diagnostic(client: LanguageClient, ws: Path) -> None:
    shown = await command(client, "forge.showConfig", {})
    assert shown["model"] == {"value": "scripted/script.json", "source": "editor"}
    assert shown["max_requests_per_turn"] == {"value": 50, "source": "editor"}
    assert shown["max_tool_failure_per_turn"] == {"value": 3, "source": "default"}
    config = ws / ".forge.toml"
    # (Written from outside the editor: the workspace asks for trust again; a plain model name and a tighter limit
    # apply all the same.)
    config.write_text('model = "openai/gpt-4o-mini"\nmax_tool_failure_per_turn = "many"\n')
    config_changed(client, config)
    await until(lambda: client.diagnostics.get(config.as_uri()))
    (diag,) = client.diagnostics[config.as_uri()]
    assert diag.range.start.line == 1 and "max_tool_failure_per_turn" in diag.message
    assert diag.severity == t.DiagnosticSeverity.Error
    assert (await command(client, "forge.showConfig", {}))["model"]["source"] == "workspace"
    config.write_text('model = "openai/gpt-4o-mini"\nmax_tool_failure_per_turn = 2\n')
    config_changed(client, config)
    await until(lambda: not client.diagnostics.get(config.as_uri()))
    assert (await command(client, "forge.showConfig", {}))["max_tool_failure_per_turn"] == {"value": 2, "source": "workspace"}
    assert any(r.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)  # type: ignore[attr-defined]


async def test_did_change_configuration_pulls_settings(client: LanguageClient) -> None:
    client.set_configuration({"maxToolFailurePerTurn": 7}, section="forge")
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=None))
    for _ in range(100):
        shown = await command(client, "forge.showConfig", {})
        if shown["max_tool_failure_per_turn"]["value"] == 7:
            break
        await asyncio.sleep(0.05)
    assert shown["max_tool_failure_per_turn"] == {"value": 7, "source": "editor"}


@pytest.mark.settings({"settings": {"maxToolFailurePerTurn": 5}})
async def test_initialization_options_are_editor_settings(client: LanguageClient) -> None:
    shown = await command(client, "forge.showConfig", {})
    assert shown["max_tool_failure_per_turn"] == {"value": 5, "source": "editor"}


async def test_edit_to_open_document_goes_through_apply_edit(client: LanguageClient, ws: Path) -> None:
    src = ws / "open.py"
    src.write_text("x = 1\n")
    open_document(client, src)
    closed = ws / "closed.py"
    closed.write_text("y = 1\n")
    patch = [
        {"name": "patch", "arguments": {"file_path": "open.py", "old_string": "x = 1", "new_string": "x = 2"}},
        {"name": "patch", "arguments": {"file_path": "closed.py", "old_string": "y = 1", "new_string": "y = 2"}},
    ]
    write_script(ws, {"tool_calls": patch}, {"text": "done"})
    result = await command(client, "forge.run", {"prompt": "bump"})
    assert result["failures"] == 0
    (edit,) = client.answers.edits  # type: ignore[attr-defined]
    (change,) = edit.edit.document_changes
    assert change.text_document.uri == src.as_uri()
    assert [(e.range.start.line, e.range.start.character, e.new_text) for e in change.edits] == [(0, 4, "2")]  # only the 1
    assert src.read_text() == "x = 2\n"  # a client that cannot save: the server writes the edit it applied
    assert closed.read_text() == "y = 2\n"


async def test_refused_apply_edit_is_a_tool_failure(client: LanguageClient, ws: Path) -> None:
    src = ws / "open.py"
    src.write_text("x = 1\n")
    open_document(client, src)
    client.answers.apply = False  # type: ignore[attr-defined]
    write_script(
        ws, {"tool_calls": [{"name": "write", "arguments": {"file_path": "open.py", "content": "z\n", "overwrite": True}}]}
    )
    result = await command(client, "forge.run", {"prompt": "w"})
    assert result["failures"] == 1
    (failed,) = [e for e in events(client) if e.type == "toolCallFinished"]
    assert "did not apply the edit" in failed.output


@pytest.mark.parametrize(("answer", "ok"), [("Allow", True), ("Deny", False), ("Allow for this conversation", True)])
async def test_shell_confirm_asks_the_user(client: LanguageClient, ws: Path, answer: str, ok: bool) -> None:
    (ws / ".forge.toml").write_text('model = "scripted/script.json"\n[tools.shell]\nconfirm = ["echo deploy*"]\n')
    config_changed(client, ws / ".forge.toml")
    client.answers.answer = answer  # type: ignore[attr-defined]
    write_script(ws, shell("echo deploy now"), shell("echo deploy now"), {"text": "ok"})
    for _ in range(100):
        if (await command(client, "forge.showConfig", {}))["tools.shell.confirm"]["value"]:
            break
        await asyncio.sleep(0.05)
    await command(client, "forge.run", {"prompt": "deploy"})
    asked = [r for r in client.answers.requests if "echo deploy now" in r.message]  # type: ignore[attr-defined]
    assert [a.title for a in asked[0].actions or []] == ["Allow", "Deny", "Allow for this conversation"]
    finished = [e for e in events(client) if e.type == "toolCallFinished"]
    assert [e.ok for e in finished] == [ok, ok]
    if not ok:
        assert "the user denied" in finished[0].output
    # "Allow for this conversation" is asked once; Allow and Deny every time.
    assert len(asked) == (1 if answer.startswith("Allow for") else 2)


async def test_new_conversation_forgets_history(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "one"}, {"text": "two"})
    first = await command(client, "forge.run", {"prompt": "a"})
    fresh = await command(client, "forge.newConversation", {})
    second = await command(client, "forge.run", {"prompt": "b"})
    assert fresh["conversationId"] == second["conversationId"] != first["conversationId"]


async def test_run_with_uri_and_range_includes_selection(client: LanguageClient, ws: Path) -> None:
    src = ws / "sel.py"
    src.write_text("a = 1\nb = 2\nc = 3\n")
    write_script(ws, {"text": "seen"})
    rng = {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 5}}
    await command(client, "forge.run", {"prompt": "explain", "uri": src.as_uri(), "range": rng})
    (started,) = [e for e in events(client) if e.type == "turnStarted"]
    assert "selected lines 2-3 of sel.py" in started.prompt and "b = 2\nc = 3" in started.prompt


async def test_broken_template_override_is_reported_and_the_builtin_used(client: LanguageClient, ws: Path) -> None:
    folder = ws / ".forge" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "forge-tool-retry-message.md").write_text("left: {{attempts_left}} {{typo_variable}}")
    config_changed(client, folder / "forge-tool-retry-message.md")
    write_script(ws, shell("exit 1"), {"text": "ok"})
    await asyncio.sleep(0.3)
    result = await command(client, "forge.run", {"prompt": "x"})
    assert result["status"] == "completed"
    (retry,) = [e for e in events(client) if e.type == "retry"]
    assert retry.notice.startswith("Tool call failed\n- **Attempts remaining:** 2")
    await until(lambda: any("typo_variable" in m.message for m in client.messages))
