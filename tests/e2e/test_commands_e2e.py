"""/commands end to end through the language server: run one, list them, untrusted workspace commands ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, config_changed, until

from conftest import ENV, write_script

pytestmark = pytest.mark.timeout(60)

GREET = "---\nname: greet\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n"


def add_command(ws: Path, name: str, text: str) -> Path:
    folder = ws / ".forge" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


async def test_run_a_workspace_command_and_list_commands(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "Bonjour"})
    path = add_command(ws, "greet.md", GREET)
    config_changed(client, path)
    listed = await command(client, "forge.listCommands", {})
    by_name = {c["name"]: c for c in listed["commands"]}
    assert by_name["greet"] == {
        "name": "greet",
        "description": "Greet someone",
        "source": "workspace",
        "takesArgs": True,
        "path": str(path),
    }
    assert {"review", "test", "explain"} <= set(by_name) and by_name["review"]["source"] == "builtin"
    summary = await command(client, "forge.run", {"prompt": "/greet Ada"})
    assert summary["status"] == "completed" and summary["text"] == "Bonjour"
    transcript = (ws / ".forge" / "transcripts" / f"{summary['turnId']}.md").read_text()
    assert "## Prompt\n\nSay hello to Ada in French." in transcript and "/greet" not in transcript


async def test_a_commands_agent_runs_its_turn_unless_the_request_names_one(client: LanguageClient, ws: Path) -> None:
    path = add_command(ws, "look.md", "---\ndescription: Look only\nagent: sage\n---\nLook at {{args}}\n")
    config_changed(client, path)
    write_a = {"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "x\n"}}]}
    write_script(ws, write_a, {"text": "done"})
    listed = await command(client, "forge.listCommands", {})
    assert {c["name"]: c.get("agent") for c in listed["commands"]}["look"] == "sage"
    summary = await command(client, "forge.run", {"prompt": "/look a.txt"})
    # sage has no write: the call fails and nothing is written
    assert summary["failures"] == 1 and not (ws / "a.txt").exists()
    assert (await command(client, "forge.status", {}))["agent"] == "forge"  # for that turn only
    write_script(ws, write_a, {"text": "done"})
    summary = await command(client, "forge.run", {"prompt": "/look a.txt", "agent": "forge"})
    assert summary["failures"] == 0 and (ws / "a.txt").read_text() == "x\n"


async def test_unknown_command_is_a_clear_error_and_a_path_is_a_prompt(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "it is a folder"})
    with pytest.raises(JsonRpcException, match=r"unknown command /nope; the commands are /explain, /review, /test"):
        await command(client, "forge.run", {"prompt": "/nope x"})
    summary = await command(client, "forge.run", {"prompt": "/usr/bin is what?"})
    assert summary["status"] == "completed"
    transcript = (ws / ".forge" / "transcripts" / f"{summary['turnId']}.md").read_text()
    assert "## Prompt\n\n/usr/bin is what?" in transcript


async def test_a_command_with_a_bad_template_is_a_diagnostic_at_its_line(client: LanguageClient, ws: Path) -> None:
    path = add_command(ws, "bad.md", "---\nname: bad\ncolour: red\n---\nok\n{{#if}}\n")
    config_changed(client, path)
    await until(lambda: client.diagnostics.get(path.as_uri()))
    found = sorted((d.range.start.line, d.message) for d in client.diagnostics[path.as_uri()])
    # 0-based lines: the unknown field (line 3) and the tag (line 6, so the file is not loaded)
    assert [line for line, _ in found] == [2, 5]
    assert found[0][1].startswith("colour: unknown field") and "needs one argument" in found[1][1]
    listed = await command(client, "forge.listCommands", {})
    assert "bad" not in {c["name"] for c in listed["commands"]}


@pytest.mark.untrusted
async def test_untrusted_workspace_commands_are_ignored_and_reported(client: LanguageClient, ws: Path) -> None:
    path = add_command(ws, "greet.md", GREET)
    config_changed(client, path)
    await until(lambda: client.diagnostics.get(path.as_uri()))
    (diag,) = client.diagnostics[path.as_uri()]
    assert diag.code == "untrusted" and diag.severity == t.DiagnosticSeverity.Warning and "not trusted" in diag.message
    listed = await command(client, "forge.listCommands", {})
    assert "greet" not in {c["name"] for c in listed["commands"]}
    with pytest.raises(JsonRpcException, match="/greet is this workspace.s command .* not trusted"):
        await command(client, "forge.run", {"prompt": "/greet Ada", "model": "scripted/echo"})


async def test_saving_a_user_command_in_the_editor_loads_it(client: LanguageClient, ws: Path) -> None:
    import asyncio
    import time

    folder = Path(ENV["XDG_CONFIG_HOME"]) / "forge-lsp" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mine-e2e.md"

    async def names() -> list[str]:
        return [c["name"] for c in (await command(client, "forge.listCommands", {}))["commands"]]

    try:
        assert "mine-e2e" not in await names()
        path.write_text("---\ndescription: Mine\n---\nDo {{args}}\n")  # written while the server runs
        assert "mine-e2e" not in await names()
        client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=path.as_uri())))
        deadline = time.monotonic() + 20
        while "mine-e2e" not in await names():
            assert time.monotonic() < deadline, "the saved command was never listed"
            await asyncio.sleep(0.1)
        assert (
            next(c for c in (await command(client, "forge.listCommands", {}))["commands"] if c["name"] == "mine-e2e")["source"]
            == "user"
        )
    finally:
        path.unlink()
