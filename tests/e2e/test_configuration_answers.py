"""workspace/configuration answers of every shape clients send: none may stall the first command."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.rawlsp import RawClient

SERVER = forkserver.command()
INIT_OPTIONS = {"maxToolFailurePerTurn": 7}


def first_status(root: Path, answer: Any) -> tuple[float, dict[str, Any], list[str]]:
    """Start a server whose client answers workspace/configuration with `answer`; time the first forge.status."""
    client = RawClient(SERVER, cwd=root, configuration_answer=answer)
    try:
        client.initialize(root, INIT_OPTIONS)
        client.notify("initialized", {})
        started = time.perf_counter()
        status = client.request("workspace/executeCommand", {"command": "forge.status", "arguments": [{}]})
        return time.perf_counter() - started, status, client.logs
    finally:
        client.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(None, id="bare-null"),
        pytest.param([], id="empty-list"),
        pytest.param([None], id="list-of-null"),
        pytest.param(["not an object"], id="list-of-string"),
    ],
)
def test_an_answer_without_settings_means_no_editor_settings_at_once(workspace: Path, answer: Any) -> None:
    elapsed, status, logs = first_status(workspace, answer)
    # The old server waited out a 5 s timeout before the first command when the answer could not be parsed.
    assert elapsed < 2.5, f"forge.status took {elapsed:.1f} s"
    assert status["limit"] == 7, "initializationOptions still apply"
    assert any("no settings for section forge" in line for line in logs), logs


@pytest.mark.timeout(60)
def test_an_answer_with_settings_applies_them(workspace: Path) -> None:
    elapsed, status, logs = first_status(workspace, [{"maxToolFailurePerTurn": 4}])
    assert elapsed < 2.5, f"forge.status took {elapsed:.1f} s"
    assert status["limit"] == 4, "workspace/configuration wins over initializationOptions"
    assert not any("no settings for section forge" in line for line in logs), logs


@pytest.mark.timeout(60)
def test_a_missing_file_named_by_forge_lsp_config_is_said_in_a_message(workspace: Path, tmp_path: Path) -> None:
    """A diagnostic on a file that does not exist is shown nowhere: the user is told in a message."""
    missing = tmp_path / "my-config.toml"
    client = RawClient(SERVER, cwd=workspace, env={"FORGE_LSP_CONFIG": str(missing)})
    shown: list[str] = []
    published: list[str] = []

    def seen(msg: dict[str, Any]) -> bool:
        if msg.get("method") == "window/showMessage":
            shown.append(msg["params"]["message"])
        if msg.get("method") == "textDocument/publishDiagnostics":
            published.append(msg["params"]["uri"])
        return bool(shown)

    try:
        client.initialize(workspace)
        client.notify("initialized", {})
        client.read_until(seen)
    finally:
        client.close()
    (message,) = shown
    assert str(missing) in message and "does not exist" in message and "FORGE_LSP_CONFIG" in message, message
    assert "last good config" not in message and missing.as_uri() not in published
