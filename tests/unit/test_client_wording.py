"""How a client names its own ways (core/wording.py): each message that says what to do names the client's command."""

from __future__ import annotations

from forge_lsp.core.wording import for_client


def test_the_running_turn_is_cancelled_the_clients_way() -> None:
    assert for_client("Neovim", None).cancel == ":ForgeCancel"  # it said forge.cancel in Neovim 0.7
    assert for_client("Visual Studio Code", None).cancel == "the command Forge: Cancel"
    assert for_client("some editor", {}).cancel == "forge.cancel (Forge: Cancel, :ForgeCancel)"
