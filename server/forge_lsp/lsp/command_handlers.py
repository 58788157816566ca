"""forge.listCommands: the /commands a forge.run prompt can start with (built-in, the user's, a trusted workspace's)."""

from __future__ import annotations

from typing import Any

from forge_lsp.lsp.folders import runtime_for
from forge_lsp.lsp.handlers import object_argument
from forge_lsp.lsp.language_server import ForgeLanguageServer


async def forge_list_commands(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{uri?} -> {commands: [{name, description, source, agent?, model?, path?}]}, by name."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.listCommands")
    runtime = runtime_for(ls, arg.get("uri"))
    return {"commands": [command.to_dict() for command in runtime.commands.list()]}
