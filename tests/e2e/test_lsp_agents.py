"""Agents through the language server: forge.setAgent, forge.listAgents, forge.run {agent}, the workspace's agent files."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, config_changed, until

from conftest import ENV, write_script

pytestmark = pytest.mark.timeout(60)

WRITE_A = {"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "x\n"}}]}


def diagnostics(client: LanguageClient, path: Path) -> list[t.Diagnostic]:
    return list(client.diagnostics.get(path.as_uri(), []))


async def test_set_agent_is_the_conversations_and_run_agent_is_the_turns(client: LanguageClient, ws: Path) -> None:
    listed = await command(client, "forge.listAgents", {})
    assert [a["id"] for a in listed["agents"]] == ["forge", "muse", "sage"] and listed["current"] == "forge"
    assert (await command(client, "forge.status", {}))["agent"] == "forge"
    # A turn with sage: its write is refused (a failure the model is told about), nothing is written.
    write_script(ws, WRITE_A, {"text": "done"})
    summary = await command(client, "forge.run", {"prompt": "write a.txt", "agent": "sage"})
    assert summary["status"] == "completed" and summary["failures"] == 1 and not (ws / "a.txt").exists()
    assert (await command(client, "forge.status", {}))["agent"] == "forge"  # forge.run's agent is for its turn
    # forge.setAgent: the conversation's next turns use it, and status says so.
    assert await command(client, "forge.setAgent", {"id": "sage"}) == {"agent": "sage", "title": "Sage"}
    assert (await command(client, "forge.status", {}))["agent"] == "sage"
    assert (await command(client, "forge.listAgents", {}))["current"] == "sage"
    write_script(ws, WRITE_A, {"text": "done"})
    summary = await command(client, "forge.run", {"prompt": "write a.txt"})
    assert summary["failures"] == 1 and not (ws / "a.txt").exists()
    # forge (the default) writes it.
    write_script(ws, WRITE_A, {"text": "done"})
    summary = await command(client, "forge.run", {"prompt": "write a.txt", "agent": "forge"})
    assert summary["failures"] == 0 and (ws / "a.txt").read_text() == "x\n"
    with pytest.raises(JsonRpcException, match="unknown agent 'nope'; agents: forge, muse, sage"):
        await command(client, "forge.setAgent", {"id": "nope"})
    with pytest.raises(JsonRpcException, match="unknown agent 'nope'"):
        await command(client, "forge.run", {"prompt": "hi", "agent": "nope"})
    with pytest.raises(JsonRpcException, match=r"forge.setAgent needs \{id: string\}"):
        await command(client, "forge.setAgent", {"id": 3})
    # A new conversation starts with forge.
    await command(client, "forge.newConversation", {})
    assert (await command(client, "forge.status", {}))["agent"] == "forge"


async def test_a_workspace_agent_loads_and_a_bad_one_is_a_diagnostic_at_its_line(client: LanguageClient, ws: Path) -> None:
    folder = ws / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "writer.md").write_text(
        "---\nid: writer\ntitle: Writer\ntools: [write]\nmax_requests_per_turn: 2\n---\nYou write files.\n"
    )
    bad = folder / "bad.md"
    bad.write_text("---\nid: bad\ntitle: Bad\nmax_tool_failure_per_turn: many\n---\nbody\n")
    config_changed(client, folder / "writer.md")
    # Agents added from outside the editor (a pull) ask for trust again: the user trusts them.
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    await until(lambda: diagnostics(client, bad))
    (diag,) = diagnostics(client, bad)
    assert diag.range.start.line == 3 and diag.severity == t.DiagnosticSeverity.Error
    assert "max_tool_failure_per_turn: expected a whole number" in diag.message and "not loaded" in diag.message
    listed = await command(client, "forge.listAgents", {})
    writer = next(a for a in listed["agents"] if a["id"] == "writer")
    assert writer == {"id": "writer", "title": "Writer", "description": "", "source": "workspace", "tools": ["write"]}
    assert "bad" not in [a["id"] for a in listed["agents"]]
    # Its limit wins over the editor's maxRequestsPerTurn (50): the third request never comes.
    write_script(ws, WRITE_A, WRITE_A, WRITE_A, {"text": "done"})
    summary = await command(client, "forge.run", {"prompt": "go", "agent": "writer"})
    assert summary["status"] == "interrupted" and summary["reason"]["kind"] == "MaxRequestPerTurnLimitReached"
    assert summary["requests"] == 2
    # Fixed: the diagnostic goes.
    bad.write_text("---\nid: bad\nmax_tool_failure_per_turn: 2\n---\nbody\n")
    config_changed(client, bad)
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    await until(lambda: not diagnostics(client, bad))
    assert "bad" in [a["id"] for a in (await command(client, "forge.listAgents", {}))["agents"]]


@pytest.mark.untrusted
async def test_an_untrusted_workspaces_agents_are_ignored_and_reported(client: LanguageClient, ws: Path) -> None:
    folder = ws / ".forge" / "agents"
    folder.mkdir(parents=True)
    agent = folder / "yolo.md"
    agent.write_text("---\nid: sage\ntools: ['*']\n---\nDo anything.\n")
    config_changed(client, agent)
    await until(lambda: diagnostics(client, agent))
    (diag,) = diagnostics(client, agent)
    assert diag.code == "untrusted" and diag.severity == t.DiagnosticSeverity.Warning and diag.range.start.line == 0
    assert "not trusted" in diag.message
    listed = await command(client, "forge.listAgents", {})
    sage = next(a for a in listed["agents"] if a["id"] == "sage")
    assert sage["source"] == "builtin" and sage["tools"] == ["read", "fs_search", "fetch", "followup"]
    # The Trust question names it with the other ignored keys.
    await until(lambda: any("yolo.md" in r.message for r in client.answers.requests))  # type: ignore[attr-defined]


async def test_saving_a_user_agent_in_the_editor_loads_it(client: LanguageClient, ws: Path) -> None:
    folder = Path(ENV["XDG_CONFIG_HOME"]) / "forge-lsp" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    agent = folder / "planner-e2e.md"
    try:
        assert "planner-e2e" not in [a["id"] for a in (await command(client, "forge.listAgents", {}))["agents"]]
        agent.write_text("---\ntitle: Planner\n---\nPlan.\n")  # written while the server runs
        assert "planner-e2e" not in [a["id"] for a in (await command(client, "forge.listAgents", {}))["agents"]]
        client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=agent.as_uri())))
        await until_listed(client, "planner-e2e")
    finally:
        agent.unlink()


async def until_listed(client: LanguageClient, agent_id: str) -> None:
    import asyncio
    import time

    deadline = time.monotonic() + 20
    while agent_id not in [a["id"] for a in (await command(client, "forge.listAgents", {}))["agents"]]:
        assert time.monotonic() < deadline, f"{agent_id} never listed"
        await asyncio.sleep(0.1)
