"""What a turn's requests open with: the system prompt (fixed for an agent and its tools) and the workspace's
context (system information, AGENTS.md), which the conversation's first message carries.

The order is for the prompt caches: a provider's (Anthropic's, OpenAI's) and llama-server's reuse the longest
prefix a request shares with an earlier one, and the tools come right after the system prompt in the prompt a
chat template renders. What differs between workspaces and days (the folder, the date, AGENTS.md) therefore
comes after the system prompt and the tools, never inside the system prompt.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

from forge_lsp.domain.agents import Agent
from forge_lsp.domain.template_names import SYSTEM_INFO, SYSTEM_PROMPT, WORKSPACE_CONTEXT
from forge_lsp.templates import TemplateEngine


def prompt_context(root: Path, tool_names: list[str], instructions: str = "") -> dict[str, Any]:
    """The variables every prompt template is rendered with: env, tool_names, custom_instructions."""
    env = {
        "os": f"{platform.system()} {platform.release()}",
        "cwd": str(root),
        "shell": os.environ.get("SHELL", "/bin/sh"),
        "date": time.strftime("%Y-%m-%d"),
    }
    return {"env": env, "tool_names": tool_names, "custom_instructions": instructions or None}


def system_prompt(templates: TemplateEngine, context: dict[str, Any], agent: Agent | None = None) -> str:
    """The agent's system prompt (the built-in forge-system-prompt.md when it has none of its own)."""
    if agent is None or agent.prompt is None:
        return templates.render(SYSTEM_PROMPT, context)
    origin = agent.path or f"built-in agent {agent.id}"
    return templates.render_text(f"agent {agent.id}", agent.prompt, origin, context)


def workspace_context(templates: TemplateEngine, context: dict[str, Any], system: str) -> str:
    """What the model is told of the workspace at the start of the conversation; whatever the system prompt already
    says (an agent's prompt that includes the system-info partial, or AGENTS.md) is not said twice."""
    info = templates.render(SYSTEM_INFO, context)
    instructions = context.get("custom_instructions")
    shown = {
        **context,
        "system_info": info.strip() not in system,
        "custom_instructions": None if instructions and instructions in system else instructions,
    }
    return templates.render(WORKSPACE_CONTEXT, shown).strip()
