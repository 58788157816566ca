"""How a client names its own ways to trust a workspace and to set the model.

Messages that tell the user what to do (trust the workspace, set a model) name the client's own
command and setting: VS Code's "Forge: Trust Workspace" and `forge.model`, Neovim's :ForgeTrust
and `settings.model` in setup(). A client is known by initialize's clientInfo.name; a client
may give its own words in initializationOptions.wording ({"trust": ..., "modelSetting": ...}),
as the Neovim plugin does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

MAX_WORDS = 120
"""The longest text a client may give for one of its words (it goes into one-line messages)."""


@dataclass(frozen=True)
class Wording:
    """trust: the ways to trust a workspace; model_setting: where the editor sets the model; cancel: how to cancel
    the running turn."""

    trust: str = "Forge: Trust Workspace, :ForgeTrust, or forge-lsp trust DIR"
    model_setting: str = "the editor setting forge.model"
    cancel: str = "forge.cancel (Forge: Cancel, :ForgeCancel)"


GENERIC = Wording()
"""A client forge-lsp does not know (and the CLI): every way there is."""
VSCODE = Wording(trust="the command Forge: Trust Workspace, or forge-lsp trust DIR", cancel="the command Forge: Cancel")
NEOVIM = Wording(
    trust=":ForgeTrust, or forge-lsp trust DIR", model_setting='settings.model in require("forge").setup()', cancel=":ForgeCancel"
)

TERMINAL = Wording(trust="forge-lsp trust DIR, or run --trust", model_setting="--model MODEL on the command line")
"""forge-lsp run: its own options."""
ACP = Wording(trust="forge-lsp trust DIR", model_setting="")
"""An ACP client: no editor command or setting of ours there (model_setting "": none to name)."""

VSCODE_NAMES = ("Visual Studio Code", "Code - OSS", "VSCodium", "Cursor", "Windsurf")


def _words(value: Any) -> str | None:
    """A client's own words: one line of text, not too long; None for anything else."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if 0 < len(text) <= MAX_WORDS else None


def for_client(client_name: str | None, options: Any) -> Wording:
    """The wording for a client: by its clientInfo.name, then what initializationOptions.wording says."""
    name = client_name or ""
    if name == "Neovim":
        wording = NEOVIM
    elif name.startswith(VSCODE_NAMES):
        wording = VSCODE
    else:
        wording = GENERIC
    own = options.get("wording") if isinstance(options, dict) else None
    if isinstance(own, dict):
        trust = _words(own.get("trust"))
        model_setting = _words(own.get("modelSetting"))
        if trust:
            wording = replace(wording, trust=trust)
        if model_setting:
            wording = replace(wording, model_setting=model_setting)
    return wording
