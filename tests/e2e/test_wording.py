"""Messages that say what to do name the client's own command and setting (issue 24 item 5).

VS Code's users read "Forge: Trust Workspace" and `forge.model`; Neovim's read :ForgeTrust and
`settings.model` in setup(); a client may give its own words (initializationOptions.wording);
an unknown client gets every way there is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_lsp import command, until

pytestmark = [pytest.mark.timeout(60), pytest.mark.untrusted]


async def messages(client: LanguageClient, ws: Path) -> str:
    """The untrusted-model diagnostic on .forge.toml and forge.run's no-model error, together."""
    uri = (ws / ".forge.toml").as_uri()
    await until(lambda: client.diagnostics.get(uri))
    (diag,) = [d for d in client.diagnostics[uri] if d.message.startswith("model:")]
    with pytest.raises(JsonRpcException, match="no model is set") as refused:
        await command(client, "forge.run", {"prompt": "hi"})
    return diag.message + "\n" + str(refused.value)


@pytest.mark.client_name("Visual Studio Code")
async def test_vscode_reads_its_own_command_and_setting(client: LanguageClient, ws: Path) -> None:
    text = await messages(client, ws)
    assert "Forge: Trust Workspace" in text and "the editor setting forge.model" in text, text
    assert ":ForgeTrust" not in text and "setup()" not in text, text


@pytest.mark.client_name("Neovim")
async def test_neovim_reads_forge_trust_and_setup(client: LanguageClient, ws: Path) -> None:
    text = await messages(client, ws)
    assert ":ForgeTrust" in text and 'settings.model in require("forge").setup()' in text, text
    assert "Trust Workspace" not in text and "forge.model" not in text, text
    assert f"forge-lsp trust {ws}" in text, text  # the CLI way, with the folder


@pytest.mark.client_name("Neovim")
@pytest.mark.settings({"wording": {"trust": ":MyTrust", "modelSetting": "settings.forge.model in vim.lsp.config"}})
async def test_a_client_gives_its_own_words(client: LanguageClient, ws: Path) -> None:
    text = await messages(client, ws)
    assert ":MyTrust" in text and "settings.forge.model in vim.lsp.config" in text, text
    assert ":ForgeTrust" not in text, text


@pytest.mark.settings({"wording": {"trust": "x" * 500, "modelSetting": ["not", "text"]}})
async def test_an_unknown_client_reads_every_way_and_bad_words_are_ignored(client: LanguageClient, ws: Path) -> None:
    text = await messages(client, ws)
    assert "Forge: Trust Workspace, :ForgeTrust, or forge-lsp trust" in text, text
    assert "the editor setting forge.model" in text and "xxxxx" not in text, text
