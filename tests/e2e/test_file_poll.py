"""Config files changed on disk while the server runs, with no editor watching them (lsp/file_poll.py):
the user's config.toml and mcp.json always, a workspace's files where the client cannot watch them
(Neovim on Linux and 0.7 offer no dynamic registration of workspace/didChangeWatchedFiles)."""

from __future__ import annotations

import asyncio
import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient
from test_lsp import command, config_changed, until
from test_lsp_trust import buffer_becomes, open_config

from forge_lsp.lsp.handlers import SAVE_WAIT_SECS

from conftest import ENV, SERVER, Answers, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
from mcp_support import flaky  # noqa: E402

pytestmark = pytest.mark.timeout(60)

USER_DIR = Path(tempfile.mkdtemp(prefix="forge-poll-user-"))
atexit.register(shutil.rmtree, USER_DIR, True)  # each worker that imports this module makes one
"""The user's config folder of these tests' servers (FORGE_LSP_CONFIG names its config.toml)."""
USER_CONFIG = USER_DIR / "config.toml"
USER_MCP = USER_DIR / "mcp.json"
POLL_ENV = {**ENV, "FORGE_LSP_CONFIG": str(USER_CONFIG)}


@pytest.fixture(autouse=True)
def user_files() -> None:
    """A fresh user folder for each test: a config without a model, no mcp.json."""
    shutil.rmtree(USER_DIR, ignore_errors=True)
    USER_DIR.mkdir()
    USER_CONFIG.write_text("[retry]\nmin_delay_ms = 10\n")


async def start(client: LanguageClient, ws: Path, dynamic: bool, trusted: bool = True) -> None:
    client.answers = Answers()  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: t.ShowMessageRequestParams) -> None:
        client.answers.requests.append(params)  # type: ignore[attr-defined]

    @client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def register(params: t.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    watched = t.DidChangeWatchedFilesClientCapabilities(dynamic_registration=dynamic)
    await client.initialize_session(
        t.InitializeParams(
            capabilities=t.ClientCapabilities(workspace=t.WorkspaceClientCapabilities(did_change_watched_files=watched)),
            root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="project")],
            initialization_options={"workspaceTrusted": True} if trusted else {},
        )
    )
    await command(client, "forge.status", {})  # initialized is handled


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=POLL_ENV))
async def unwatched(lsp_client: LanguageClient, ws: Path) -> AsyncIterator[LanguageClient]:
    """A client that cannot watch files for the server (Neovim on Linux)."""
    await start(lsp_client, ws, dynamic=False)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=POLL_ENV))
async def unwatched_untrusted(lsp_client: LanguageClient, ws: Path) -> AsyncIterator[LanguageClient]:
    """The same, in a workspace the editor does not vouch for (trust is the store's)."""
    await start(lsp_client, ws, dynamic=False, trusted=False)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=POLL_ENV))
async def watching(lsp_client: LanguageClient, ws: Path) -> AsyncIterator[LanguageClient]:
    """A client that watches the workspace's files for the server (VS Code)."""
    await start(lsp_client, ws, dynamic=True)
    yield lsp_client
    await lsp_client.shutdown_session()


def poll_reloads(client: LanguageClient, name: str) -> list[str]:
    """The server's log lines saying it found name changed on disk."""
    return [m.message for m in client.log_messages if "changed on disk" in m.message and name in m.message]


async def status_shows(client: LanguageClient, check: object, timeout: float = 15.0) -> dict[str, object]:
    found: dict[str, object] = {}

    async def ok() -> bool:
        found.update(await command(client, "forge.status", {}))
        return bool(check(found))  # type: ignore[operator]

    deadline = time.monotonic() + timeout
    while not await ok():
        assert time.monotonic() < deadline, f"forge.status never showed it: {found}"
        await asyncio.sleep(0.2)
    return found


async def test_a_server_added_to_the_users_mcp_json_is_listed(unwatched: LanguageClient) -> None:
    assert [s["name"] for s in (await command(unwatched, "forge.status", {}))["mcp"]] == []
    USER_MCP.write_text(json.dumps({"mcpServers": {"fake": flaky()}}))
    await status_shows(unwatched, lambda s: [m["name"] for m in s["mcp"]] == ["fake"])
    listed = await command(unwatched, "forge.mcpServers", {})
    assert [s["name"] for s in listed["servers"]] == ["fake"]


async def test_a_model_set_in_the_users_config_toml_applies(unwatched: LanguageClient, ws: Path) -> None:
    (ws / ".forge.toml").write_text("[retry]\nmin_delay_ms = 10\n")  # the workspace sets no model
    config_changed(unwatched, ws / ".forge.toml")  # (no effect: nothing registered; the poll notices it)
    await status_shows(unwatched, lambda s: s["model"] is None)
    USER_CONFIG.write_text('model = "openai/gpt-4o-mini"\n')
    await status_shows(unwatched, lambda s: s["model"] == "openai/gpt-4o-mini")


async def test_a_trusted_workspaces_config_changed_by_another_program_asks_again(
    unwatched_untrusted: LanguageClient, ws: Path
) -> None:
    client = unwatched_untrusted
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    # A git pull (no editor involved) adds a key trust covers.
    (ws / ".forge.toml").write_text((ws / ".forge.toml").read_text() + 'api_base = "http://127.0.0.1:9/v1"\n')
    # (forge.status says "changed" at once: it asks the store; the settings in force change on the reload.)
    status = await status_shows(client, lambda s: s["trusted"] is False)
    assert status["trust"] == "changed"
    assert poll_reloads(client, ".forge.toml")
    await until(lambda: any("is not trusted (its files changed" in r.message for r in client.answers.requests), 15)  # type: ignore[attr-defined]


async def test_a_client_that_watches_the_workspace_gets_no_second_reload(watching: LanguageClient, ws: Path) -> None:
    assert watching.registrations  # type: ignore[attr-defined]
    (ws / ".forge.toml").write_text('model = "openai/gpt-4o-mini"\n')
    config_changed(watching, ws / ".forge.toml")  # the editor's watcher says so
    await status_shows(watching, lambda s: s["model"] == "openai/gpt-4o-mini")
    # The user's files are still checked: a change there, noticed, shows a round ran after the workspace's.
    USER_MCP.write_text(json.dumps({"mcpServers": {"fake": flaky()}}))
    await until(lambda: poll_reloads(watching, "mcp.json"), 15)
    assert poll_reloads(watching, ".forge.toml") == []


async def test_the_users_own_save_in_the_editor_keeps_the_trust_when_the_check_sees_it(
    unwatched_untrusted: LanguageClient, ws: Path
) -> None:
    client = unwatched_untrusted
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    config = ws / ".forge.toml"
    open_config(client, config)
    asked = len(client.answers.requests)  # type: ignore[attr-defined]
    edited = "# my own note\n" + config.read_text()
    buffer_becomes(client, config, edited, 2)
    config.write_text(edited)  # Neovim's :w, then its didSave (no watcher)
    client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=config.as_uri())))
    await until(lambda: poll_reloads(client, ".forge.toml"), 15)  # the check saw the save too
    await asyncio.sleep(SAVE_WAIT_SECS + 0.3)  # the reload it waits for the save's didSave
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    assert len(client.answers.requests) == asked  # type: ignore[attr-defined]


async def test_a_script_is_checked_though_the_client_watches_the_workspace(watching: LanguageClient, ws: Path) -> None:
    """VS Code watches .forge.toml, .mcp.json and .forge/*/*.md for the server, not the script .forge.toml names:
    the server's own check does (issue 34 item 2)."""
    status = await command(watching, "forge.status", {})
    assert (status["trusted"], status["model"]) == (True, "scripted/script.json")
    write_script(ws, {"text": "pulled"})  # a pull adds the script; the editor's watchers say nothing
    status = await status_shows(watching, lambda s: s["trusted"] is False)
    assert status["trust"] == "changed"
    assert poll_reloads(watching, "script.json")
    await until(lambda: any("changed since you trusted it" in r.message for r in watching.answers.requests), 15)  # type: ignore[attr-defined]


async def test_a_script_an_agent_names_is_checked_on_disk(unwatched_untrusted: LanguageClient, ws: Path) -> None:
    client = unwatched_untrusted
    folder = ws / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "helper.md").write_text("---\nmodel: scripted/.forge/helper.json\n---\nHelp.\n")
    (ws / ".forge" / "helper.json").write_text('{"responses": [{"text": "hello"}]}')
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    (ws / ".forge" / "helper.json").write_text('{"responses": [{"text": "pulled"}]}')  # only the agent's script
    status = await status_shows(client, lambda s: s["trusted"] is False)
    assert status["trust"] == "changed"
    assert poll_reloads(client, "helper.json")
    agents = await command(client, "forge.listAgents", {})
    assert "helper" not in [agent["id"] for agent in agents["agents"]]


def forge_lsp(*args: str) -> None:
    """The CLI, as the user runs it in a terminal beside the editor (the same trust store)."""
    done = subprocess.run([*SERVER, *args], env=POLL_ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


async def test_trust_given_or_revoked_in_a_terminal_applies_in_the_running_editor(
    unwatched_untrusted: LanguageClient, ws: Path
) -> None:
    client = unwatched_untrusted
    write_script(ws, {"text": "ok"})  # its scripted model applies only once the workspace is trusted
    await status_shows(client, lambda s: s["model"] is None and s["trusted"] is False)
    forge_lsp("trust", str(ws))
    await status_shows(client, lambda s: s["trusted"] is True and s["model"] == "scripted/script.json")
    assert any("is trusted (the trust store changed)" in m.message for m in client.log_messages)
    # Said where the user looks, once: the editor's own Trust button makes no such message.
    assert [m.message for m in client.messages if "trusted now" in m.message] == [
        f"Forge: {ws.name} is trusted now (forge-lsp trust): its .forge.toml and .forge/ apply"
    ]
    forge_lsp("trust", "--revoke", str(ws))
    await status_shows(client, lambda s: s["trusted"] is False and s["model"] is None)
    await until(lambda: any("is no longer trusted (forge-lsp trust --revoke)" in m.message for m in client.messages), 15)


async def test_a_typo_in_the_users_config_is_said_once_in_a_message(unwatched: LanguageClient, ws: Path) -> None:
    """Its diagnostic is on a file the editor does not have open (Neovim shows none of those): a message says it.
    A workspace's own file is not said so (its diagnostics are where the user works; a cloned repository's key
    names stay out of notifications)."""

    def told() -> list[str]:
        return [m.message for m in unwatched.messages if "modle" in m.message]

    USER_CONFIG.write_text('modle = "openai/gpt-4o"\n')
    await until(lambda: told(), 15)
    assert told() == [f"Forge: modle: unknown key (did you mean model?) ({USER_CONFIG}:1)"]
    USER_CONFIG.write_text('modle = "openai/gpt-4o"\n\n')  # read again, the same problem: not said again
    await until(lambda: poll_reloads(unwatched, "config.toml"), 15)
    await command(unwatched, "forge.status", {})
    assert len(told()) == 1
    (ws / ".forge.toml").write_text((ws / ".forge.toml").read_text() + "bogus_key = 1\n")
    await until(lambda: any("bogus_key" in d.message for d in unwatched.diagnostics.get((ws / ".forge.toml").as_uri(), [])), 15)
    assert not [m.message for m in unwatched.messages if "bogus_key" in m.message]
