"""followup: ask the user a question; the turn ends until they answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolOutput, obj, string


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """End the turn with a question for the user."""
    return ToolOutput(f"Asked the user: {args['question']}", yields=True)


TOOL = Implementation(
    description="Ask the user a question when you need their decision or information; your turn ends until they answer.",
    parameters=obj({"question": string("The question for the user.")}, ["question"]),
    run=run,
)
