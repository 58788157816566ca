"""The one prompt pipeline (core/pipeline.py): what accept refuses and in which order, what a /command and what is
attached make of the prompt, which model and agent win, and a turn run from a PromptRequest to its events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from forge_lsp.core.commands import UnknownCommand
from forge_lsp.core.errors import EmptyPrompt, TurnInProgress, UnknownAgent
from forge_lsp.core.pipeline import ArgsWithoutCommand, PromptRequest, TurnRunning, with_args
from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.events import Event, Interrupt, Retry, TurnFinished, TurnStarted


def command(workspace: Path, name: str, text: str) -> None:
    folder = workspace / ".forge" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


def test_a_command_is_expanded_and_the_requests_model_and_agent_win_over_its_own(workspace: Path) -> None:
    command(workspace, "plan", "---\ndescription: Plan\nagent: muse\nmodel: scripted/echo\n---\nPlan {{args}}.\n")
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        own = runtime.accept(PromptRequest("/plan the release", attached="Context from the editor:\nx"))
        assert own.prompt == "Plan the release.\n\nContext from the editor:\nx"
        assert (own.model, own.agent) == ("scripted/echo", "muse")
        chosen = runtime.accept(PromptRequest("/plan it", model="scripted/demo", agent="sage"))
        assert (chosen.prompt, chosen.model, chosen.agent) == ("Plan it.", "scripted/demo", "sage")
        plain = runtime.accept(PromptRequest("//plan is a path"))
        assert (plain.prompt, plain.model, plain.agent) == ("/plan is a path", None, None)
        later = plain.attach("Context from the editor:\ny", {"file": "a.py"})
        assert later.prompt == "/plan is a path\n\nContext from the editor:\ny" and later.request.context == {"file": "a.py"}
    finally:
        runtime.close()


def test_accept_refuses_the_prompt_then_the_agent_then_a_running_turn_then_the_command(workspace: Path) -> None:
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        with pytest.raises(EmptyPrompt):
            runtime.accept(PromptRequest("  ", agent="nope"))
        # The words may be empty when something is attached (an ACP prompt whose first text block is empty).
        assert runtime.accept(PromptRequest("", attached="see this")).prompt == "\n\nsee this"
        with pytest.raises(UnknownAgent, match="unknown agent 'nope'"):
            runtime.accept(PromptRequest("/nope", agent="nope"))
        running = asyncio.new_event_loop()
        try:
            runtime.turns._task = running.create_future()  # type: ignore[assignment]
            runtime.turns.turn_id = "t-running"
            with pytest.raises(TurnRunning) as refused:
                runtime.accept(PromptRequest("/nope"))
            assert (refused.value.root, refused.value.turn_id) == (runtime.root, "t-running")
            assert isinstance(refused.value, TurnInProgress)
        finally:
            runtime.turns._task = None
            running.close()
        with pytest.raises(UnknownCommand, match="unknown command /nope"):
            runtime.accept(PromptRequest("/nope"))
    finally:
        runtime.close()


def test_a_prompt_finds_the_config_and_commands_saved_a_moment_before_it(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No frontend's file check (every POLL_SECS) has seen the files yet: accept reads them first."""
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text("[retry]\nmin_delay_ms = 10\n")
    monkeypatch.setenv("FORGE_LSP_CONFIG", str(user))
    runtime = WorkspaceRuntime(workspace, trusted=False)
    try:
        assert runtime.config.model is None
        with pytest.raises(UnknownCommand):
            runtime.accept(PromptRequest("/ship it"))
        user.write_text('model = "scripted/echo"\n[[hooks]]\nevent = "post_tool"\ncommand = "true"\n')
        (user.parent / "commands").mkdir()
        (user.parent / "commands" / "ship.md").write_text("---\ndescription: Ship\n---\nShip {{args}}.\n")
        assert runtime.accept(PromptRequest("/ship it")).prompt == "Ship it."
        assert runtime.config.model == "scripted/echo" and [h.event for h in runtime.config.hooks] == ["post_tool"]
        before = runtime.effective
        runtime.accept(PromptRequest("again"))
        assert runtime.effective is before  # nothing changed since: nothing is read again
    finally:
        runtime.close()


def test_arguments_go_with_a_command_only() -> None:
    assert with_args("/review", ["src/a.py", "--strict"]) == "/review src/a.py --strict"
    with pytest.raises(ArgsWithoutCommand):
        with_args("fix", ["the", "test"])


async def test_a_request_runs_its_commands_prompt_in_the_sessions_conversation(workspace: Path) -> None:
    (workspace / "s.json").write_text(json.dumps({"responses": [{"text": "planned"}]}))
    command(workspace, "plan", "---\ndescription: Plan\nmodel: scripted/s.json\n---\nPlan {{args}}.\n")
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        session = runtime.new_session()
        events: list[Event] = []
        accepted = runtime.accept(PromptRequest("/plan the release", session=session, context={"file": "a.py"}))
        summary = await runtime.prompt(accepted, events.append)
        assert summary.status.value == "completed" and summary.conversation_id == session.conversation_id
        started = next(e for e in events if isinstance(e, TurnStarted))
        assert (started.prompt, started.model, started.context) == ("Plan the release.", "scripted/s.json", {"file": "a.py"})
        assert isinstance(events[-1], TurnFinished)
        users = [m.content for m in runtime.history(session) if m.role == "user"]
        assert users == ["Plan the release."]
    finally:
        runtime.close()


async def test_retries_and_the_interrupt_carry_the_place_the_transcript_tells_of_them(workspace: Path) -> None:
    """The frontends point their diagnostics at the transcript from the events alone (lsp/turns.py read the
    runtime's transcript writer)."""
    failing = {"tool_calls": [{"name": "read", "arguments": {"file_path": "missing.py"}}]}
    (workspace / "s.json").write_text(json.dumps({"responses": [failing] * 4}))
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        events: list[Event] = []
        summary = await runtime.prompt(runtime.accept(PromptRequest("read it", model="scripted/s.json")), events.append)
        assert summary.status.value == "interrupted"
        retries = [e for e in events if isinstance(e, Retry)]
        interrupt = next(e for e in events if isinstance(e, Interrupt))
        assert len(retries) == 3 and interrupt.transcript is not None
        lines = Path(interrupt.transcript.path).read_text().splitlines()
        assert lines[interrupt.transcript.line].startswith("## Interrupted"), lines[interrupt.transcript.line]
        for retry in retries:
            assert retry.transcript is not None and retry.transcript.path == interrupt.transcript.path
            assert lines[retry.transcript.line].startswith("### Tool call: read"), lines[retry.transcript.line]
            assert retry.call_id in lines[retry.transcript.line]
        assert len({r.transcript.line for r in retries if r.transcript}) == 3
        assert "transcript" not in retries[0].to_dict()  # never on the wire
    finally:
        runtime.close()


def test_the_frontends_ports_are_given_as_it_opens_the_workspace(workspace: Path, tmp_path: Path) -> None:
    from forge_lsp.core.wording import TERMINAL

    (tmp_path / "secret.md").write_text("not the workspace's")
    (workspace / "AGENTS.md").symlink_to(tmp_path / "secret.md")
    notices: list[str] = []
    runtime = WorkspaceRuntime(workspace, wording=TERMINAL, on_notice=notices.append)
    try:
        assert runtime.instructions() == ""
        assert notices and notices[0].startswith("forge-lsp: AGENTS.md is not used: it points outside the workspace")
        assert "--model MODEL on the command line" in runtime.no_model_message()
    finally:
        runtime.close()
