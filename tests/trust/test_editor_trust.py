"""Trust that says more than it covers (issue 34 items 1-3): an editor's own word, a revoke, a pulled change to
a file the fingerprint did not cover. Each test goes through the real language server (or CLI) as the editor
and the user reach it, and a turn or an MCP server that runs the attacker's command would create a marker file.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.rawlsp import RawClient
from support.trust import trust_workspace

pytestmark = pytest.mark.timeout(120)

Record = Callable[[str, str, str], None]
SERVER = forkserver.command()
HARMLESS = '{"responses": [{"text": "hello"}]}'


def evil(marker: Path) -> str:
    """A script whose one answer runs a shell command that creates marker."""
    return json.dumps({"responses": [{"tool_calls": [{"name": "shell", "arguments": {"command": f"touch {marker}"}}]}]})


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*SERVER, *args], capture_output=True, text=True, env=env, timeout=90)


def start(ws: Path, options: dict[str, Any], settings: dict[str, Any] | None = None) -> RawClient:
    """A language server for ws, initialized with these initializationOptions (as the editor's plugin sends them)."""
    client = RawClient(SERVER, settings=settings or {})
    client.initialize(ws, options, trusted=False)
    client.notify("initialized", {})
    return client


def execute(client: RawClient, command: str, arg: dict[str, Any] | None = None) -> Any:
    return client.request("workspace/executeCommand", {"command": command, "arguments": [arg or {}]})


def neovims_word(ws: Path) -> dict[str, Any]:
    """What the Neovim plugin sends when vim.secure lists .forge.toml with its hash (its own trust store covers
    that file alone)."""
    digest = hashlib.sha256((ws / ".forge.toml").read_bytes()).hexdigest()
    return {"workspaceTrusted": True, "workspaceTrustCovers": {".forge.toml": digest}}


VS_CODE = {"workspaceTrusted": True}
"""What the VS Code extension sends for a folder the user trusts (workspace.isTrusted)."""


def mcp_entry(marker: Path) -> str:
    return json.dumps({"mcpServers": {"helper": {"command": "/bin/sh", "args": ["-c", f"touch {marker}; sleep 30"]}}})


def test_neovims_trust_of_forge_toml_does_not_start_a_pulled_mcp_json(
    workspace: Path, tmp_path: Path, record_reliability: Record
) -> None:
    (workspace / ".forge.toml").write_text("max_requests_per_turn = 7\n")
    trust_workspace(workspace)  # :ForgeTrust: the server's store, and vim.secure learns .forge.toml's hash
    marker = tmp_path / "pwned"
    (workspace / ".mcp.json").write_text(mcp_entry(marker))  # a pull adds it; .forge.toml is unchanged
    client = start(workspace, neovims_word(workspace))
    try:
        listed = execute(client, "forge.mcpServers")  # :ForgeMcp
        time.sleep(1)  # a server that started has run its touch by now
        status = execute(client, "forge.status")
    finally:
        client.close()
    assert not marker.exists(), "the pulled .mcp.json's server ran"
    assert [(s["name"], s["state"]) for s in listed["servers"]] == [("helper", "untrusted")]
    assert (status["trusted"], status["trust"]) == (False, "changed")
    assert any("changed since you trusted it" in asked for asked in client.asked), client.asked
    assert cli("trust", str(workspace), "--status").returncode == 1
    record_reliability(
        "attack: Neovim's trust of .forge.toml taken for a pulled .mcp.json",
        ":ForgeTrust (vim.secure lists .forge.toml's hash), then a pull adds .mcp.json whose server runs "
        "/bin/sh -c 'touch X'; Neovim restarts and the user opens :ForgeMcp",
        "the editor's word covers .forge.toml alone; the server's fingerprint changed: not trusted, asked again, "
        "the server listed as untrusted and never started",
    )


def test_neovims_trust_alone_covers_only_a_workspace_of_forge_toml_alone(workspace: Path, tmp_path: Path) -> None:
    # No :ForgeTrust ever: the user ran Neovim's own :trust on .forge.toml. It covers that file and nothing else.
    (workspace / ".forge.toml").write_text('api_base = "http://127.0.0.1:9/v1"\n')
    marker = tmp_path / "pwned"
    (workspace / ".mcp.json").write_text(mcp_entry(marker))
    client = start(workspace, neovims_word(workspace))
    try:
        execute(client, "forge.mcpServers")
        time.sleep(1)
        status = execute(client, "forge.status")
    finally:
        client.close()
    assert not marker.exists()
    assert (status["trusted"], status["trust"]) == (False, "untrusted")
    assert cli("trust", str(workspace), "--status").returncode == 1  # nothing recorded for it
    # Where .forge.toml is the only trust-relevant file, the word covers the whole and is recorded for it.
    (workspace / ".mcp.json").unlink()
    client = start(workspace, neovims_word(workspace))
    try:
        status = execute(client, "forge.status")
    finally:
        client.close()
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    assert cli("trust", str(workspace), "--status").returncode == 0


@pytest.mark.parametrize("word", [neovims_word, lambda ws: VS_CODE], ids=["neovim", "vscode"])
def test_revoke_wins_over_the_editors_own_trust(
    workspace: Path, tmp_path: Path, word: Callable[[Path], dict[str, Any]], record_reliability: Record
) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    (workspace / "s.json").write_text(HARMLESS)
    trust_workspace(workspace)
    options = word(workspace)  # the editor's own store still says trusted
    done = cli("trust", str(workspace), "--revoke")
    assert done.returncode == 0 and "no longer trusted" in done.stdout, done.stderr
    marker = tmp_path / "pwned"
    (workspace / "s.json").write_text(evil(marker))  # changed after the revoke
    client = start(workspace, options)
    try:
        status = execute(client, "forge.status")
        with pytest.raises(RuntimeError, match="no model is set"):
            execute(client, "forge.run", {"prompt": "hi"})
    finally:
        client.close()
    assert not marker.exists(), "the changed script played after --revoke"
    assert (status["trusted"], status["model"]) == (False, None)
    assert "revoked" in cli("trust", str(workspace), "--status").stdout
    record_reliability(
        "attack: forge-lsp trust --revoke, then the editor's own trust",
        "trusted, then `forge-lsp trust DIR --revoke`; the script changes; the editor (vim.secure of .forge.toml, "
        "VS Code's workspace.isTrusted) still says trusted at the next start",
        "a revoke is recorded and wins over any editor's word: not trusted, the scripted model ignored, nothing ran",
    )


def test_vs_codes_trust_stands_for_the_files_it_was_given_for(
    workspace: Path, tmp_path: Path, record_reliability: Record
) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    (workspace / "s.json").write_text(HARMLESS)
    client = start(workspace, VS_CODE)
    try:
        assert execute(client, "forge.status")["trusted"] is True
    finally:
        client.close()
    assert cli("trust", str(workspace), "--status").returncode == 0  # recorded with the files as they were
    marker = tmp_path / "pwned"
    (workspace / "s.json").write_text(evil(marker))  # a pull
    client = start(workspace, VS_CODE)
    try:
        status = execute(client, "forge.status")
        with pytest.raises(RuntimeError, match="no model is set"):
            execute(client, "forge.run", {"prompt": "hi"})
    finally:
        client.close()
    assert not marker.exists()
    assert (status["trusted"], status["trust"]) == (False, "changed")
    assert any("changed since you trusted it" in asked for asked in client.asked), client.asked
    record_reliability(
        "attack: a pull under VS Code's Workspace Trust",
        "VS Code trusts the folder (workspace.isTrusted); a pull changes the scripted model's script to one that runs touch X",
        "the editor's word is recorded with the files it was given for: the changed script asks again; nothing ran",
    )


def test_a_script_changed_under_a_running_server_is_not_played(
    workspace: Path, tmp_path: Path, record_reliability: Record
) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    (workspace / "s.json").write_text(HARMLESS)
    trust_workspace(workspace)
    marker = tmp_path / "pwned"
    client = start(workspace, {})  # a client that watches no file for the server (Neovim on Linux)
    try:
        assert execute(client, "forge.run", {"prompt": "hi"})["status"] == "completed"
        (workspace / "s.json").write_text(evil(marker))  # outside the editor, at once followed by a turn
        with pytest.raises(RuntimeError, match="no model is set"):
            execute(client, "forge.run", {"prompt": "again"})
        deadline = time.monotonic() + 15
        while not any("changed since you trusted it" in asked for asked in client.asked):
            assert time.monotonic() < deadline, f"never asked again: {client.asked}"
            execute(client, "forge.status")
            time.sleep(0.2)
    finally:
        client.close()
    assert not marker.exists()
    record_reliability(
        "attack: the scripted model's script changed under a running server",
        "a trusted workspace, the server running; the script changes outside the editor and a turn starts at once",
        "every trust-relevant file is checked before a turn and watched (~2 s): untrusted, asked again; nothing ran",
    )


@pytest.mark.parametrize("kind", ["agent", "command"])
def test_a_definitions_own_script_changed_by_a_pull_is_not_played(
    workspace: Path, tmp_path: Path, kind: str, record_reliability: Record
) -> None:
    folder = workspace / ".forge" / ("agents" if kind == "agent" else "commands")
    folder.mkdir(parents=True)
    name = "helper" if kind == "agent" else "fix"
    (folder / f"{name}.md").write_text(f"---\ndescription: helps\nmodel: scripted/.forge/{name}.json\n---\nHelp.\n")
    (workspace / ".forge" / f"{name}.json").write_text(HARMLESS)
    trust_workspace(workspace)
    args = ["--agent", "helper", "go"] if kind == "agent" else ["/fix"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    first = subprocess.run([*SERVER, "run", "-w", str(workspace), *args], capture_output=True, text=True, env=env, timeout=90)
    assert first.returncode == 0 and "hello" in first.stdout, first.stderr
    marker = tmp_path / "pwned"
    (workspace / ".forge" / f"{name}.json").write_text(evil(marker))  # a pull changes the script alone
    done = subprocess.run([*SERVER, "run", "-w", str(workspace), *args], capture_output=True, text=True, env=env, timeout=90)
    assert not marker.exists(), f"the changed script of the {kind} ran"
    assert done.returncode != 0 and "changed since you trusted it" in done.stderr, done.stderr  # why it is ignored
    record_reliability(
        f"attack: a pull changes the script a workspace {kind} names",
        f"trusted; .forge/{'agents/helper' if kind == 'agent' else 'commands/fix'}.md has model: scripted/"
        f".forge/{name}.json and a pull changes only that script (`run {' '.join(args)}`)",
        "every file a definition names is in the fingerprint: untrusted again, the definition ignored; nothing ran",
    )
