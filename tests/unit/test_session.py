"""The core's Session and Workspaces: one conversation's answers and todos; one runtime per root."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from forge_lsp.core.errors import BadPrompt, EmptyPrompt, check_prompt
from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.core.session import Ask, Session, answer
from forge_lsp.core.session import asking as core_asking
from forge_lsp.core.workspaces import Workspaces
from forge_lsp.domain.events import Event
from forge_lsp.domain.questions import PermissionAsked
from forge_lsp.tools.base import DiskFiles, NobodyToAsk


def through_events(ask: Ask, seen: list[Event] | None = None) -> Ask:
    """A turn's way of asking (core.session.asking): a PermissionAsked event in its stream, which this frontend
    answers with ask."""

    def emit(event: Event) -> None:
        if seen is not None:
            seen.append(event)
        if isinstance(event, PermissionAsked):
            answer(event, ask)

    return core_asking(emit, "t1")


def asking(*answers: str) -> tuple[list[str], Session, Ask]:
    asked: list[str] = []
    replies = iter(answers)

    async def ask(_tool: str, question: str, _call_id: str | None) -> str:
        asked.append(question)
        return next(replies)

    return asked, Session("c1", DiskFiles()), through_events(ask)


async def test_allow_for_this_conversation_is_remembered_by_its_session_only() -> None:
    asked, session, ask = asking("always", "allow", "deny")
    assert await session.confirm("shell", "run git push?", ask=ask)
    assert await session.confirm("shell", "run git push?", ask=ask)  # not asked again
    assert await session.confirm("shell", "run rm x?", ask=ask)  # allowed once: asked again next time
    assert not await session.confirm("shell", "run rm x?", ask=ask)
    assert asked == ["run git push?", "run rm x?", "run rm x?"]
    other_asked, other, other_ask = asking("deny")
    assert not await other.confirm("shell", "run git push?", ask=other_ask)
    assert other_asked == ["run git push?"]
    session.reset()
    assert session.allowed == set() and session.todos == []


async def test_nobody_to_ask_is_not_a_denial_and_a_broken_client_is() -> None:
    with pytest.raises(NobodyToAsk):
        await Session(None, DiskFiles()).confirm("shell", "run git push?")
    # A frontend that takes no question (the event goes by unanswered): nobody can be asked either.
    with pytest.raises(NobodyToAsk):
        await Session(None, DiskFiles()).confirm("shell", "run git push?", ask=core_asking(lambda _e: None, "t1"))

    async def broken(_tool: str, _question: str, _call_id: str | None) -> str:
        raise ConnectionError("client went away")

    assert not await Session(None, DiskFiles()).confirm("shell", "run git push?", ask=through_events(broken))


async def test_a_question_withdrawn_by_a_cancelled_turn_stops_the_frontends_asking() -> None:
    waiting = asyncio.Event()
    stopped: list[bool] = []

    async def slow(_tool: str, _question: str, _call_id: str | None) -> str:
        waiting.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.append(True)
            raise
        return "allow"

    seen: list[Event] = []
    confirm = asyncio.ensure_future(Session(None, DiskFiles()).confirm("shell", "run it?", "call_9", through_events(slow, seen)))
    await asyncio.wait_for(waiting.wait(), 5)
    asked = [e for e in seen if isinstance(e, PermissionAsked)]
    assert [(e.turn_id, e.tool, e.question, e.call_id) for e in asked] == [("t1", "shell", "run it?", "call_9")]
    assert asked[0].to_dict() == {
        "type": "permissionAsked",
        "turnId": "t1",
        "tool": "shell",
        "question": "run it?",
        "callId": "call_9",
    }
    confirm.cancel()
    with pytest.raises(asyncio.CancelledError):
        await confirm
    await asyncio.sleep(0)
    assert stopped == [True]


def test_the_prompt_check_says_what_is_wrong() -> None:
    for bad in ("", "  \n", None, 42):
        with pytest.raises(EmptyPrompt):
            check_prompt(bad)
    with pytest.raises(BadPrompt, match="over the 200000-character limit"):
        check_prompt("x" * 200_001)
    assert check_prompt("fix it") == "fix it"


def test_workspaces_open_one_runtime_per_root_and_close_them_all(tmp_path: Path) -> None:
    opened: list[Path] = []

    def open_runtime(root: Path) -> WorkspaceRuntime:
        opened.append(root)
        return WorkspaceRuntime(root)

    workspaces = Workspaces(open_runtime)
    (tmp_path / "a").mkdir()
    first = workspaces.get(tmp_path / "a")
    assert workspaces.get(tmp_path / "a" / ".." / "a") is first
    assert workspaces.find(tmp_path / "b") is None and opened == [(tmp_path / "a").resolve()]
    assert list(workspaces) == [first] and not workspaces.cancel()
    first.store.new_conversation()  # opens the state database
    workspaces.close_all()
    assert first._store is None


def test_the_errors_module_is_cheap_to_import() -> None:
    # Handlers import it at the top: it must not pull in the runtime (config, state, templates, litellm).
    import subprocess

    code = "import forge_lsp.core.errors, sys; print(sorted(m for m in sys.modules if m.startswith('forge_lsp')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["forge_lsp", "forge_lsp.core", "forge_lsp.core.errors"]


async def test_the_question_names_the_tool_call_it_is_about() -> None:
    calls: list[str | None] = []

    async def ask(_tool: str, _question: str, call_id: str | None) -> str:
        calls.append(call_id)
        return "always"

    session = Session("c1", DiskFiles())
    assert await session.confirm("shell", "run git push?", "call_1", through_events(ask))
    assert await session.confirm("shell", "run git push?", "call_2", through_events(ask))  # remembered: not asked again
    assert await session.confirm("shell", "run rm x?", ask=through_events(ask))
    assert calls == ["call_1", None]
