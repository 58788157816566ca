"""Commands in ACP: the workspace's /commands as available_commands_update (clients show them as slash
commands), and a prompt "/name args" expanded to the command's prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from forge_lsp.acp.conversions import prompt_text
from forge_lsp.core.commands import Expansion

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime

ARGS_HINT = "arguments (optional)"


def commands_key(runtime: WorkspaceRuntime) -> list[tuple[str, str, bool]]:
    """What available_commands_update says of the commands in force: a change of it is announced again."""
    return [(c.name, c.description, c.takes_args) for c in runtime.commands.list()]


def commands_update(runtime: WorkspaceRuntime) -> AvailableCommandsUpdate:
    """The commands in force in the runtime's workspace, by name; one that uses {{args}} has an input hint."""
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=ARGS_HINT)) if command.takes_args else None,
            )
            for command in runtime.commands.list()
        ],
    )


def expand_prompt(runtime: WorkspaceRuntime, blocks: list[Any]) -> Expansion:
    """What an ACP prompt runs. A first text block "/name args" is the command (its args end with that block:
    context the client attached after it stays context); otherwise the prompt's text as it is.

    UnknownCommand / BadPrompt as runtime.expand_command raises them."""
    first = blocks[0] if blocks else None
    if getattr(first, "type", None) != "text":
        return runtime.expand_command(prompt_text(blocks))
    expansion = runtime.expand_command(first.text)  # type: ignore[union-attr]
    rest = prompt_text(blocks[1:])
    if not rest:
        return expansion
    return Expansion(f"{expansion.prompt}\n\n{rest}", expansion.command, expansion.agent, expansion.model)
