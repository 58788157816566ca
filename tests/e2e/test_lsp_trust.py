"""Workspace trust end to end: an untrusted workspace as an editor user meets it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, config_changed, until

from conftest import write_script

pytestmark = [pytest.mark.timeout(60), pytest.mark.untrusted]


def trust_requests(client: LanguageClient) -> list[t.ShowMessageRequestParams]:
    return [r for r in client.answers.requests if r.actions and [a.title for a in r.actions] == ["Trust", "Not now"]]  # type: ignore[attr-defined]


def config_diagnostics(client: LanguageClient, ws: Path) -> list[t.Diagnostic]:
    return list(client.diagnostics.get((ws / ".forge.toml").as_uri(), []))


async def test_untrusted_workspace_ignores_its_scripted_model_and_says_so_once(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "hi"})
    status = await command(client, "forge.status", {})
    assert status["trusted"] is False and status["trust"] == "untrusted"
    await until(lambda: config_diagnostics(client, ws))
    # (write_script's retry min_delay_ms = 10 is ignored too: lower than the default loosens it.)
    (diag,) = [d for d in config_diagnostics(client, ws) if d.range.start.line == 0]
    assert diag.code == "untrusted" and diag.severity == t.DiagnosticSeverity.Warning and diag.range.start.line == 0
    assert "model" in diag.message and "not trusted" in diag.message and "forge-lsp trust" in diag.message
    await until(lambda: trust_requests(client))
    (ask,) = trust_requests(client)
    assert "not trusted" in ask.message and "model" in ask.message
    # No silent default either: the turn is refused, saying where the model is set.
    with pytest.raises(
        JsonRpcException, match="no model is set: this workspace.s model .* is ignored because the workspace is not trusted"
    ):
        await command(client, "forge.run", {"prompt": "hi"})
    # An unchanged file reloaded asks no second time.
    config_changed(client, ws / ".forge.toml")
    await command(client, "forge.status", {})
    assert len(trust_requests(client)) == 1


async def test_trust_button_applies_the_workspace_settings_at_once(client: LanguageClient, ws: Path) -> None:
    # The test client answered "Trust" to the question that came at start (before the script was written,
    # so write it first in a moment: the trust covers .forge.toml; the script is checked as it is then).
    client.answers.answer = "Trust"  # type: ignore[attr-defined]
    write_script(ws, {"text": "hi from a trusted workspace"})
    config_changed(client, ws / ".forge.toml")
    await until(lambda: trust_requests(client))

    async def trusted() -> bool:
        return bool((await command(client, "forge.status", {}))["trusted"])

    for _ in range(200):
        if await trusted():
            break
    assert await trusted()
    await until(lambda: not config_diagnostics(client, ws))
    result = await command(client, "forge.run", {"prompt": "hi"})
    assert result["status"] == "completed" and result["text"] == "hi from a trusted workspace"


async def test_forge_trust_command_and_revoke(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "ok"})
    result = await command(client, "forge.trust", {})
    assert result["trusted"] is True and result["root"] == str(ws.resolve())
    assert (await command(client, "forge.showConfig", {}))["model"]["source"] == "workspace"
    assert (await command(client, "forge.run", {"prompt": "go"}))["status"] == "completed"
    # A changed file is untrusted again, and asked about again.
    (ws / ".forge.toml").write_text('model = "scripted/script.json"\napi_base = "http://127.0.0.1:9/v1"\n')
    asked = len(trust_requests(client))
    config_changed(client, ws / ".forge.toml")
    status = await command(client, "forge.status", {})
    assert status["trusted"] is False and status["trust"] == "changed"
    await until(lambda: len(trust_requests(client)) == asked + 1)
    await until(lambda: {d.message.split(":")[0] for d in config_diagnostics(client, ws)} == {"model", "api_base"})
    await command(client, "forge.trust", {})
    revoked = await command(client, "forge.trust", {"revoke": True})
    assert revoked["trusted"] is False
    with pytest.raises(JsonRpcException, match="revoke must be"):
        await command(client, "forge.trust", {"revoke": "yes"})


async def test_editor_settings_cannot_claim_trust(client: LanguageClient, ws: Path) -> None:
    # workspace/configuration is settings, which a workspace's own .vscode/settings.json may set.
    client.set_configuration({"workspaceTrusted": True, "workspace_trusted": True}, section="forge")
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings=None))
    status = await command(client, "forge.status", {})
    assert status["trusted"] is False


@pytest.mark.settings({"settings": {"workspaceTrusted": True}})
async def test_settings_inside_initialization_options_cannot_claim_trust(client: LanguageClient) -> None:
    assert (await command(client, "forge.status", {}))["trusted"] is False


async def test_untrusted_workspace_may_tighten_limits_never_loosen_them(client: LanguageClient, ws: Path) -> None:
    (ws / ".forge.toml").write_text("max_tool_failure_per_turn = 99\nmax_requests_per_turn = 5\n[retry]\nmin_delay_ms = 0\n")
    config_changed(client, ws / ".forge.toml")
    await until(lambda: len(config_diagnostics(client, ws)) == 2)
    diags = sorted(config_diagnostics(client, ws), key=lambda d: d.range.start.line)
    assert [(d.code, d.severity, d.range.start.line) for d in diags] == [
        ("untrusted", t.DiagnosticSeverity.Warning, 0),
        ("untrusted", t.DiagnosticSeverity.Warning, 3),
    ]
    assert "99 would loosen your limit; 3 is kept" in diags[0].message
    shown = await command(client, "forge.showConfig", {})
    assert shown["max_tool_failure_per_turn"] == {"value": 3, "source": "default"}
    assert shown["max_requests_per_turn"] == {"value": 5, "source": "workspace"}
    assert shown["retry.min_delay_ms"]["source"] == "default"
    assert (await command(client, "forge.status", {}))["limit"] == 3


async def test_a_refused_turn_ends_the_progress_it_began(client: LanguageClient, ws: Path) -> None:
    """Issue 24 item 11: a turn refused (no model) ends its progress; Neovim showed its prompt as running."""
    with pytest.raises(JsonRpcException, match="no model is set"):
        await command(client, "forge.run", {"prompt": "hi there"})
    await until(lambda: client.progress_reports)
    for reports in client.progress_reports.values():
        assert isinstance(reports[-1], t.WorkDoneProgressEnd), reports
