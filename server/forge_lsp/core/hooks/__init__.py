"""Turn policies, one small module each, run by the orchestrator at fixed points of its loop
(Forge's forge_app/hooks is the model). A new policy is a TurnHook in a module here, added to default_hooks."""

from __future__ import annotations

from forge_lsp.core.hooks.base import TurnHook, TurnView
from forge_lsp.core.hooks.doom_loop import DoomLoopReminder
from forge_lsp.core.hooks.pending_todos import PendingTodosReminder
from forge_lsp.domain.ports import TemplatePort, ToolPort

__all__ = ["DoomLoopReminder", "PendingTodosReminder", "TurnHook", "TurnView", "default_hooks"]


def default_hooks(templates: TemplatePort, tools: ToolPort) -> list[TurnHook]:
    """The policies of every turn, in the order they are asked (new ones for each turn)."""
    return [DoomLoopReminder(templates), PendingTodosReminder(templates, tools)]
