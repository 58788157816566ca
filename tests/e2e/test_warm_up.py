"""litellm is warmed in the background once the server is idle: commands keep answering meanwhile."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import ENV, REAL_SERVER, capabilities, write_script

pytestmark = pytest.mark.timeout(90)

# The warm-up starts 0.2 s after `initialized` here (0 by default); the scripted model goes through litellm.
WARM_ENV = {**ENV, "FORGE_LSP_WARMUP_DELAY": "0.2", "FORGE_LSP_SCRIPTED": "litellm"}
OFF_ENV = {**ENV, "FORGE_LSP_WARMUP_DELAY": "off", "FORGE_LSP_SCRIPTED": "litellm"}


async def start(client: LanguageClient, ws: Path) -> None:
    # The script before the editor trusts the workspace: its trust covers the script as it is then.
    write_script(ws, {"text": "warm"})

    @client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def register(params: t.RegistrationParams) -> None:
        pass

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        pass

    await client.initialize_session(
        t.InitializeParams(
            capabilities=capabilities(),
            root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="project")],
            initialization_options={"workspaceTrusted": True},  # its scripted model applies
        )
    )


async def status(client: LanguageClient) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    result = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="forge.status", arguments=[{}]))
    return result, time.monotonic() - started


@pytest_lsp.fixture(config=ClientServerConfig(server_command=REAL_SERVER, server_env=WARM_ENV))
async def warm_client(lsp_client: LanguageClient, ws: Path):  # type: ignore[no-untyped-def]
    await start(lsp_client, ws)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=REAL_SERVER, server_env=OFF_ENV))
async def cold_client(lsp_client: LanguageClient, ws: Path):  # type: ignore[no-untyped-def]
    await start(lsp_client, ws)
    yield
    await lsp_client.shutdown_session()


async def test_status_answers_while_litellm_loads_and_then_reports_it_loaded(warm_client: LanguageClient, ws: Path) -> None:
    answers: list[tuple[bool, float]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        result, elapsed = await status(warm_client)
        answers.append((result["modelLibraryLoaded"], elapsed))
        if result["modelLibraryLoaded"]:
            break
    loading = [elapsed for loaded, elapsed in answers if not loaded]
    assert answers[-1][0], "litellm was not loaded within 60 s of initialized"
    # The import takes seconds: forge.status was asked many times meanwhile and answered each time
    # (a command blocked on the import would have answered once, after it).
    assert len(loading) >= 3, answers
    assert max(loading) < 2, answers  # generous: a 2-core machine shared with other work (0.5 s seen)
    # Loaded and warm: a turn goes straight to the model.
    started = time.monotonic()
    result = await warm_client.workspace_execute_command_async(
        t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": "hi"}])
    )
    assert result["status"] == "completed" and result["text"] == "warm"
    assert time.monotonic() - started < 5
    assert "timing: totalMs" in "\n".join(m.message for m in warm_client.log_messages)


async def test_warm_up_off_leaves_litellm_unloaded(cold_client: LanguageClient) -> None:
    for _ in range(10):
        result, _ = await status(cold_client)
        assert result["modelLibraryLoaded"] is False
