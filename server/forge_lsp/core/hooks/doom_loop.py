"""The doom-loop reminder: the same tool calls repeated THRESHOLD times in a row."""

from __future__ import annotations

from forge_lsp.core.hooks.base import TurnHook, TurnView
from forge_lsp.domain import doom_loop
from forge_lsp.domain.ports import TemplatePort
from forge_lsp.domain.template_names import DOOM_LOOP_REMINDER


class DoomLoopReminder(TurnHook):
    """Reminds at THRESHOLD repetitions, then again every THRESHOLD more: a reminder per request would drown the model."""

    kind = "doomLoop"

    def __init__(self, templates: TemplatePort) -> None:
        self.templates = templates
        self.reminded_at = 0

    def before_request(self, turn: TurnView) -> str | None:
        reps = doom_loop.trailing_repetitions(turn.signatures)
        if reps < doom_loop.THRESHOLD or reps < self.reminded_at + doom_loop.THRESHOLD:
            return None
        self.reminded_at = reps
        return self.templates.render(DOOM_LOOP_REMINDER, {"consecutive_calls": reps})
