"""Commands in ACP: the workspace's /commands as available_commands_update (clients show them as slash
commands), and a prompt "/name args" as the core takes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from forge_lsp.acp.conversions import prompt_text

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


def split_prompt(blocks: list[Any]) -> tuple[str, str]:
    """An ACP prompt as the core takes it: (the user's words, what is attached after them). A first text block
    is the words: a "/name args" there is the command, its args ending with that block (context the client
    attached after it stays context); otherwise the whole prompt's text is the words."""
    first = blocks[0] if blocks else None
    if getattr(first, "type", None) != "text":
        return prompt_text(blocks), ""
    return first.text, prompt_text(blocks[1:])  # type: ignore[union-attr]
