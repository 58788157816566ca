"""Workspace trust end to end: an untrusted workspace as an editor user meets it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, config_changed, until

from forge_lsp.lsp.handlers import SAVE_WAIT_SECS
from forge_lsp.lsp.user_saves import SAVE_FLUSH_SECS

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
    assert "not trusted" in ask.message and "model" in ask.message and "changed since" not in ask.message
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


# -- saving .forge.toml in the editor (issue 24 item 2) --------------------------------------------


def open_config(client: LanguageClient, path: Path) -> None:
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=path.as_uri(), language_id="toml", version=1, text=path.read_text())
        )
    )


def buffer_becomes(client: LanguageClient, path: Path, text: str, version: int) -> None:
    """The editor's buffer changes to text (the user typing, the editor reloading it, an applied edit)."""
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def editor_saves(client: LanguageClient, path: Path, text: str) -> None:
    """The editor writes its buffer to disk, then says so (didSave, then the file watcher)."""
    path.write_text(text)
    client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=path.as_uri())))
    config_changed(client, path)


async def trusted_workspace(client: LanguageClient, ws: Path, *script: dict[str, Any]) -> Path:
    """ws trusted with script (the scripted model's answers: trust covers them) and its .forge.toml open."""
    write_script(ws, *(script or ({"text": "ok"}, {"text": "ok"}, {"text": "ok"})))
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    config = ws / ".forge.toml"
    open_config(client, config)
    return config


async def test_trusting_with_the_config_open_then_saving_an_edit_keeps_the_trust(client: LanguageClient, ws: Path) -> None:
    """Issue 35 (Neovim 0.7.2): .forge.toml open in an untrusted workspace, :ForgeTrust, an edit, :w asked again
    every time: the buffer, read from the disk untrusted, stayed "not the user's" after they trusted that text."""
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.status", {}))["trusted"] is False  # (the workspace is open)
    config = ws / ".forge.toml"
    open_config(client, config)  # untrusted text, from the disk
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    asked = len(trust_requests(client))
    text = config.read_text()
    for version, note in enumerate(("# my own note\n", "# and another\n"), start=2):
        text = note + text
        buffer_becomes(client, config, text, version)
        editor_saves(client, config, text)
        status = await command(client, "forge.status", {})
        assert (status["trusted"], status["trust"]) == (True, "trusted")
    await asyncio.sleep(SAVE_WAIT_SECS + 0.3)  # the watcher's reload, which waits for the save
    assert (await command(client, "forge.status", {}))["trusted"] is True
    assert len(trust_requests(client)) == asked


async def test_a_save_the_user_makes_in_the_editor_keeps_the_trust(client: LanguageClient, ws: Path) -> None:
    config = await trusted_workspace(client, ws)
    asked = len(trust_requests(client))
    edited = "# my own note\n" + config.read_text()
    buffer_becomes(client, config, edited, 2)
    editor_saves(client, config, edited)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"], status["model"]) == (True, "trusted", "scripted/script.json")
    # A second save (another change) keeps it too, and nothing asks.
    edited = "max_requests_per_turn = 40\n" + edited
    buffer_becomes(client, config, edited, 3)
    editor_saves(client, config, edited)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    assert (await command(client, "forge.run", {"prompt": "hi"}))["status"] == "completed"
    await asyncio.sleep(0.3)
    assert len(trust_requests(client)) == asked
    assert not config_diagnostics(client, ws)


async def test_a_save_whose_last_change_comes_after_the_write_keeps_the_trust(client: LanguageClient, ws: Path) -> None:
    # Neovim sends the buffer's pending didChange when it says didSave, after writing the file.
    config = await trusted_workspace(client, ws)
    edited = "# typed just before :w\n" + config.read_text()
    config.write_text(edited)
    buffer_becomes(client, config, edited, 2)
    editor_saves(client, config, edited)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    # And the next save, well after, is the user's too.
    await asyncio.sleep(SAVE_FLUSH_SECS + 0.2)
    edited += "# and later\n"
    buffer_becomes(client, config, edited, 3)
    editor_saves(client, config, edited)
    assert (await command(client, "forge.status", {}))["trust"] == "trusted"


async def test_a_change_from_outside_the_editor_still_asks_even_when_the_user_saves_it(client: LanguageClient, ws: Path) -> None:
    config = await trusted_workspace(client, ws)
    # Another program (a git pull) writes the file; the editor reloads the unmodified buffer.
    pulled = config.read_text() + 'api_base = "http://127.0.0.1:9/v1"\n'
    config.write_text(pulled)
    buffer_becomes(client, config, pulled, 2)
    config_changed(client, config)
    # The user then saves that buffer (a reflexive :w, a moment later): still not the user's config.
    await command(client, "forge.status", {})
    await asyncio.sleep(SAVE_FLUSH_SECS + 0.2)
    editor_saves(client, config, pulled)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")
    await until(lambda: trust_requests(client))
    # The question says why it comes again, as forge-lsp run does.
    assert "is not trusted (its files changed since you trusted it)" in trust_requests(client)[-1].message


async def test_a_reload_then_the_users_typing_saved_at_once_still_asks(client: LanguageClient, ws: Path) -> None:
    # VS Code takes an outside change into the open buffer as a didChange (no didClose + didOpen); the user
    # types at once and saves, well within SAVE_FLUSH_SECS. A change after the one that matched the disk
    # (a later version) shows the buffer was not the save itself: the pulled text is not the user's.
    config = await trusted_workspace(client, ws)
    pulled = config.read_text() + 'api_base = "http://127.0.0.1:9/v1"\n'
    config.write_text(pulled)  # a git pull
    buffer_becomes(client, config, pulled, 2)  # the editor reloads the unmodified buffer
    await command(client, "forge.status", {})  # the reload is handled (the user's keys come after it)
    typed = pulled + "# typed right after\n"
    buffer_becomes(client, config, typed, 3)
    await command(client, "forge.status", {})  # VS Code sends the typing before it writes the file
    editor_saves(client, config, typed)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")


async def test_a_file_changed_outside_then_opened_and_saved_at_once_still_asks(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    config = ws / ".forge.toml"
    config.write_text(config.read_text() + 'api_base = "http://127.0.0.1:9/v1"\n')  # another program
    open_config(client, config)  # the editor reads it from the disk
    editor_saves(client, config, config.read_text())  # and :w straight away
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")


async def test_a_reloaded_buffer_saved_while_the_server_reads_the_disk_still_asks(client: LanguageClient, ws: Path) -> None:
    # Neovim reloads a changed file as didClose + didOpen, then :w writes it (the file is renamed away
    # or truncated for a moment) and says didSave: the server may read the disk mid-write.
    config = await trusted_workspace(client, ws)
    pulled = 'api_base = "http://127.0.0.1:9/v1"\n' + config.read_text()
    config.write_text(pulled)  # a git pull
    client.text_document_did_close(t.DidCloseTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=config.as_uri())))
    config.write_text("")  # the editor's write has begun
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=config.as_uri(), language_id="toml", version=1, text=pulled)
        )
    )
    await command(client, "forge.status", {})  # the didOpen is handled
    editor_saves(client, config, pulled)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")


async def test_a_new_config_the_user_writes_in_the_editor_keeps_the_trust(client: LanguageClient, ws: Path) -> None:
    # A buffer opened empty for a file not on the disk yet is the user's to fill.
    write_script(ws, {"text": "ok"})
    (ws / ".forge.toml").unlink()
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    config = ws / ".forge.toml"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(uri=config.as_uri(), language_id="toml", version=1, text=""))
    )
    await command(client, "forge.status", {})  # the didOpen is handled before the file exists
    typed = "max_requests_per_turn = 40\n"
    buffer_becomes(client, config, typed, 2)
    editor_saves(client, config, typed)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (True, "trusted")


async def test_an_edit_the_agent_made_to_the_open_config_is_not_the_users_save(client: LanguageClient, ws: Path) -> None:
    hostile = (ws / ".forge.toml").read_text() + 'api_base = "http://127.0.0.1:9/v1"\n'
    config = await trusted_workspace(
        client,
        ws,
        {"tool_calls": [{"name": "write", "arguments": {"file_path": ".forge.toml", "content": hostile, "overwrite": True}}]},
        {"text": "done"},
    )
    assert (await command(client, "forge.run", {"prompt": "w"}))["status"] == "completed"
    (edit,) = client.answers.edits  # type: ignore[attr-defined]
    assert edit.edit.document_changes[0].text_document.uri == config.as_uri()
    # The editor applied the agent's edit to its buffer; the user saves it.
    buffer_becomes(client, config, hostile, 2)
    editor_saves(client, config, hostile)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (False, "changed")
    # The user adds a line of their own to the agent's text: still the agent's content.
    buffer_becomes(client, config, hostile + "# mine\n", 3)
    editor_saves(client, config, hostile + "# mine\n")
    assert (await command(client, "forge.status", {}))["trust"] == "changed"


async def test_a_user_save_does_not_cover_another_file_changed_meanwhile(client: LanguageClient, ws: Path) -> None:
    config = await trusted_workspace(client, ws)
    (ws / "script.json").write_text('{"responses": [{"text": "changed by someone else"}]}')
    edited = "# note\n" + config.read_text()
    buffer_becomes(client, config, edited, 2)
    editor_saves(client, config, edited)
    assert (await command(client, "forge.status", {}))["trust"] == "changed"


async def test_a_file_watcher_faster_than_didsave_does_not_ask(client: LanguageClient, ws: Path) -> None:
    config = await trusted_workspace(client, ws)
    asked = len(trust_requests(client))
    edited = "# note\n" + config.read_text()
    buffer_becomes(client, config, edited, 2)
    config.write_text(edited)
    config_changed(client, config)  # the watcher first (notifications are handled in the order they are sent)
    client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=config.as_uri())))
    await asyncio.sleep(1.5)
    status = await command(client, "forge.status", {})
    assert (status["trusted"], status["trust"]) == (True, "trusted")
    assert len(trust_requests(client)) == asked


# -- a .forge.toml that does not parse (issue 24 item 3) --------------------------------------------


async def test_a_syntax_error_keeps_the_last_good_config_of_a_trusted_workspace(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "still here"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    config = ws / ".forge.toml"
    good = config.read_text()
    config.write_text('model = "scripted/script.json"\n[retry\n')  # saved half-typed, from any program
    config_changed(client, config)
    await until(lambda: any("invalid TOML" in d.message for d in config_diagnostics(client, ws)))
    (diag,) = config_diagnostics(client, ws)
    assert diag.severity == t.DiagnosticSeverity.Error and diag.range.start.line == 1
    assert ".forge.toml is ignored as a whole, so its last good version stays in force" in diag.message
    status = await command(client, "forge.status", {})
    assert (status["model"], status["trusted"]) == ("scripted/script.json", True)
    assert (await command(client, "forge.run", {"prompt": "hi"}))["text"] == "still here"
    # Back as it was trusted, the file applies again; the trust question never came.
    config.write_text(good)
    config_changed(client, config)
    await until(lambda: not config_diagnostics(client, ws))
    assert not trust_requests(client)


async def test_a_syntax_error_does_not_cover_another_changed_file(client: LanguageClient, ws: Path) -> None:
    write_script(ws, {"text": "ok"})
    assert (await command(client, "forge.trust", {}))["trusted"] is True
    write_script(ws, {"text": "someone else's script"})
    (ws / ".forge.toml").write_text('model = "scripted/script.json"\n[retry\n')
    config_changed(client, ws / ".forge.toml")
    status = await command(client, "forge.status", {})
    assert (status["model"], status["trusted"], status["trust"]) == (None, False, "changed")
