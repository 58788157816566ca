"""The pending-todos reminder: a turn that would end with todos still open is reminded of them once."""

from __future__ import annotations

from forge_lsp.core.hooks.base import TurnHook, TurnView
from forge_lsp.domain.ports import TemplatePort, ToolPort
from forge_lsp.domain.template_names import PENDING_TODOS_REMINDER

OPEN = ("pending", "in_progress")


class PendingTodosReminder(TurnHook):
    """Asked when the model answers: the open todos, unless the same ones were the last reminder."""

    kind = "pendingTodos"

    def __init__(self, templates: TemplatePort, tools: ToolPort) -> None:
        self.templates = templates
        self.tools = tools
        self.reminded: list[dict[str, str]] | None = None

    def on_answer(self, turn: TurnView) -> str | None:
        pending = [t for t in self.tools.pending_todos() if t.get("status") in OPEN]
        if not pending or pending == self.reminded:
            return None
        self.reminded = pending
        return self.templates.render(PENDING_TODOS_REMINDER, {"todos": pending})
