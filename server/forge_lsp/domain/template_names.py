"""The file names of the templates the agent renders, defined once (templates/ holds the files).

A workspace overrides one by the same name in .forge/templates/ (when trusted).
"""

from __future__ import annotations

RETRY_MESSAGE = "forge-tool-retry-message.md"
ERROR_REFLECTION = "forge-partial-tool-error-reflection.md"
DOOM_LOOP_REMINDER = "forge-doom-loop-reminder.md"
PENDING_TODOS_REMINDER = "forge-pending-todos-reminder.md"
SUMMARY_FRAME = "forge-partial-summary-frame.md"
SYSTEM_INFO = "forge-partial-system-info.md"
SYSTEM_PROMPT = "forge-system-prompt.md"
WORKSPACE_CONTEXT = "forge-workspace-context.md"
"""What the model is told of the workspace at the start of the conversation (after the fixed system prompt)."""

TURN_TEMPLATES = (SYSTEM_PROMPT, SYSTEM_INFO, WORKSPACE_CONTEXT, RETRY_MESSAGE, ERROR_REFLECTION)
"""What every turn renders (compiled ahead by the runtime's preload)."""
