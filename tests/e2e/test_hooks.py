"""The user's hooks in an editor: the server in a real subprocess, a user config.toml with [[hooks]] (issue 37)."""

from __future__ import annotations

import asyncio
import atexit
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient
from test_lsp import command, transcript_uri, until

from conftest import ENV, SERVER, Answers, write_script
from support.hooks import GUARD, call
from support.processes import left_running_in, processes_in

pytestmark = pytest.mark.timeout(60)

USER_DIR = Path(tempfile.mkdtemp(prefix="forge-hooks-user-"))
atexit.register(shutil.rmtree, USER_DIR, True)  # each worker that imports this module makes one
"""The user's config folder of these tests' servers (FORGE_LSP_CONFIG names its config.toml)."""
USER_CONFIG = USER_DIR / "config.toml"
HOOKS_ENV = {**ENV, "FORGE_LSP_CONFIG": str(USER_CONFIG)}


def user_hooks(text: str) -> None:
    USER_CONFIG.write_text("[retry]\nmin_delay_ms = 10\n\n" + text)


@pytest.fixture(autouse=True)
def user_files() -> None:
    shutil.rmtree(USER_DIR, ignore_errors=True)
    USER_DIR.mkdir()
    (USER_DIR / "guard.py").write_text(GUARD)
    user_hooks("")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=HOOKS_ENV))
async def editor(lsp_client: LanguageClient, ws: Path, request: pytest.FixtureRequest) -> AsyncIterator[LanguageClient]:
    """An editor on the workspace: it trusts it (as VS Code does one the user trusts) unless @pytest.mark.untrusted."""
    lsp_client.answers = Answers()  # type: ignore[attr-defined]
    lsp_client.forge_events = []  # type: ignore[attr-defined]

    @lsp_client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: t.ShowMessageRequestParams) -> None:
        lsp_client.answers.requests.append(params)  # type: ignore[attr-defined]

    @lsp_client.feature("forge/event")
    def on_event(params: Any) -> None:
        lsp_client.forge_events.append(params)  # type: ignore[attr-defined]

    options: dict[str, Any] = {"settings": {"model": "scripted/script.json"}}
    if request.node.get_closest_marker("untrusted") is None:
        options["workspaceTrusted"] = True
    (ws / ".forge.toml").write_text(
        request.node.get_closest_marker("workspace_toml").args[0] if request.node.get_closest_marker("workspace_toml") else ""
    )
    await lsp_client.initialize_session(
        t.InitializeParams(
            capabilities=t.ClientCapabilities(window=t.WindowClientCapabilities(work_done_progress=True)),
            root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="project")],
            initialization_options=options,
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


def events(client: LanguageClient, kind: str) -> list[Any]:
    return [e for e in client.forge_events if e.type == kind]  # type: ignore[attr-defined]


async def test_hooks_block_fail_and_add_to_calls_and_a_broken_one_is_a_diagnostic_on_its_line(
    editor: LanguageClient, ws: Path
) -> None:
    user_hooks(
        f'[[hooks]]\nevent = "pre_tool"\nmatcher = "write|patch"\ncommand = "{sys.executable} {USER_DIR / "guard.py"}"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "shell"\ncommand = "echo \'lint: 2 problems\' >&2; exit 2"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "read"\ncommand = "echo checked by the read hook"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "todo_*"\ncommand = "echo broken >&2; exit 3"\n'
    )
    (ws / "a.txt").write_text("hello\n")
    write_script(
        ws,
        call("write", file_path="app/.env", content="KEY=1\n"),
        call("shell", command="echo made > made.txt"),
        call("read", file_path="a.txt"),
        call("todo_read"),
        {"text": "done"},
    )
    result = await command(editor, "forge.run", {"prompt": "set up the app"})
    assert result["status"] == "completed" and (result["toolCalls"], result["failures"]) == (4, 2)
    assert not (ws / "app" / ".env").exists() and (ws / "made.txt").read_text() == "made\n"  # blocked; ran, then failed
    finished = {e.tool: e for e in events(editor, "toolCallFinished")}
    assert (
        not finished["write"].ok and "Blocked: app/.env holds secrets; write app/.env.example instead" in finished["write"].output
    )
    assert not finished["shell"].ok and "<cause>lint: 2 problems\n(the post_tool hook" in finished["shell"].output
    assert finished["read"].ok and finished["read"].output.endswith(
        "post_tool hook `echo checked by the read hook`: checked by the read hook"
    )
    assert finished["todo_read"].ok
    assert [(r.tool, r.attemptsLeft) for r in events(editor, "retry")] == [("write", 2), ("shell", 2)]
    retries = [d for d in editor.diagnostics[transcript_uri(ws, result["turnId"])] if d.code == "tool-retry"]
    assert [d.message.split(":", 1)[0] for d in retries] == ["write failed", "shell failed"]
    (error,) = events(editor, "hookError")
    hook = error.hook
    assert (hook.event, hook.command, hook.source, hook.file, hook.line) == (
        "post_tool",
        "echo broken >&2; exit 3",
        "user",
        str(USER_CONFIG),
        19,
    )
    assert error.tool == "todo_read" and error.first is True and "exited 3 (broken)" in error.message
    (diag,) = editor.diagnostics[USER_CONFIG.as_uri()]
    assert (diag.code, diag.severity, diag.range.start.line, diag.source) == (
        "hook-error",
        t.DiagnosticSeverity.Warning,
        18,
        "forge",
    )
    assert diag.message.startswith("post_tool hook `echo broken >&2; exit 3` exited 3 (broken)")
    await until(lambda: any("hook" in m.message and "exited 3" in m.message for m in editor.messages))
    (shown,) = [m for m in editor.messages if "exited 3" in m.message]
    assert shown.type == t.MessageType.Warning and shown.message.startswith("Forge: the post_tool hook `echo broken >&2; exit 3`")
    assert any("⚠ hook: the post_tool hook" in m.message for m in editor.log_messages)
    # A new turn clears the last turn's hook diagnostics, as it does its retries'.
    write_script(ws, {"text": "hi"})
    await command(editor, "forge.run", {"prompt": "hi"})
    await until(lambda: not editor.diagnostics.get(USER_CONFIG.as_uri()))


@pytest.mark.workspace_toml(
    "[hooks]\nmax_stop_blocks = 2\n\n[[hooks.stop]]\ncommand = \"echo 'run the tests first' >&2; exit 2\"\n"
)
async def test_a_stop_hook_that_always_exits_2_keeps_the_turn_going_max_stop_blocks_times(
    editor: LanguageClient, ws: Path
) -> None:
    write_script(ws, {"text": "done"}, {"text": "done, really"}, {"text": "truly done"}, {"text": "never asked"})
    result = await command(editor, "forge.run", {"prompt": "finish"})
    assert result["status"] == "completed" and result["requests"] == 3
    reminders = events(editor, "reminder")
    assert [r.kind for r in reminders] == ["stopHook", "stopHook"]
    assert "did not let the turn end: run the tests first" in reminders[0].text
    (error,) = events(editor, "hookError")
    assert error.hook.source == "workspace" and error.hook.line == 4 and "max_stop_blocks (2)" in error.message
    assert any("↺ reminder to the model (stop hook)" in m.message for m in editor.log_messages)
    shown = await command(editor, "forge.showConfig", {})
    assert shown["hooks.max_stop_blocks"] == {"value": 2, "source": "workspace"}
    assert [(h["event"], h["source"], h["line"]) for h in shown["hooks"]["value"]] == [("stop", "workspace", 4)]


@pytest.mark.untrusted
@pytest.mark.workspace_toml(
    '[[hooks]]\nevent = "pre_tool"\ncommand = "touch pwned"\n\n[[hooks]]\nevent = "stop"\ncommand = "touch pwned"\n'
)
async def test_an_untrusted_workspaces_hooks_never_run_and_are_said_at_their_lines(
    editor: LanguageClient, ws: Path, record_reliability: Any
) -> None:
    user_hooks('[[hooks]]\nevent = "post_tool"\ncommand = "touch mine"\n')
    write_script(ws, call("shell", command="true"), {"text": "done"})
    result = await command(editor, "forge.run", {"prompt": "go"})
    assert result["status"] == "completed"
    assert not (ws / "pwned").exists() and (ws / "mine").exists()  # the user's own hook runs in every workspace
    await until(lambda: len(editor.diagnostics.get((ws / ".forge.toml").as_uri(), [])) == 2)
    diags = editor.diagnostics[(ws / ".forge.toml").as_uri()]
    assert [(d.code, d.range.start.line) for d in diags] == [("untrusted", 0), ("untrusted", 4)]
    assert "a hook is a program" in diags[0].message and "this pre_tool hook does not run" in diags[0].message
    await until(lambda: editor.answers.requests)  # type: ignore[attr-defined]
    (asked,) = editor.answers.requests  # type: ignore[attr-defined]
    assert "hooks" in asked.message and [a.title for a in asked.actions or []][0] == "Trust"
    shown = await command(editor, "forge.showConfig", {})
    assert [h["source"] for h in shown["hooks"]["value"]] == ["user"]
    record_reliability(
        "attack: a cloned repository's [[hooks]] in its .forge.toml (a program run as the user, outside the sandbox)",
        "an untrusted workspace whose .forge.toml has a pre_tool and a stop hook that touch a file; a turn with a shell call",
        "neither hook ran (no file); each reported untrusted at its line, Trust offered; the user's own hook ran",
    )


async def test_cancel_kills_a_sleeping_hook_with_its_process_group(
    editor: LanguageClient, ws: Path, record_reliability: Any
) -> None:
    marker = ws / "hook-started"
    user_hooks(f'[[hooks]]\nevent = "pre_tool"\nmatcher = "shell"\ncommand = "sleep 300 & touch {marker}; wait"\n')
    write_script(ws, call("shell", command="touch ran"), {"text": "never"})
    run = asyncio.ensure_future(command(editor, "forge.run", {"prompt": "go"}))
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert time.monotonic() < deadline and not run.done(), "the hook never started"
        await asyncio.sleep(0.05)
    assert any("sleep 300" in p for p in processes_in(ws))
    cancelled = await command(editor, "forge.cancel", {})
    assert cancelled["cancelled"] is True
    assert cancelled["stopped"].startswith("the running pre_tool hook for the shell call was killed (sleep 300 & touch ")
    result = await run
    assert result["status"] == "cancelled" and not (ws / "ran").exists()
    assert left_running_in(ws) == []
    record_reliability(
        "a pre_tool hook sleeping, with a background child, when the turn is cancelled",
        "forge.cancel in the editor (pytest-lsp)",
        "the hook's process group killed: no process left in the workspace; the turn cancelled, the call not run",
    )


async def test_a_bad_hook_entry_is_a_diagnostic_on_its_line_and_the_others_run(editor: LanguageClient, ws: Path) -> None:
    user_hooks(
        '[[hooks]]\nevent = "pre_tool"\nmatcher = "Bash"\ncommand = "touch claude"\n\n'
        '[[hooks]]\nevent = "post_tool"\nmatcher = "shell"\ncommand = "touch forge"\n'
    )
    write_script(ws, call("shell", command="true"), {"text": "done"})
    await command(editor, "forge.run", {"prompt": "go"})
    assert (ws / "forge").exists() and not (ws / "claude").exists()
    await until(lambda: bool(editor.diagnostics.get(USER_CONFIG.as_uri())))
    (diag,) = editor.diagnostics[USER_CONFIG.as_uri()]
    assert diag.code == "config" and diag.range.start.line == 5 and "Bash is shell" in diag.message
    assert diag.message.endswith("; this hook is ignored") and "this key is ignored" not in diag.message
