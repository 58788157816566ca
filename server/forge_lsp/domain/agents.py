"""Agents: who runs a turn (Forge's forge, muse and sage, and the user's own), and which tools each may use.

An agent is a system prompt, a tool list (names and globs, e.g. ``mcp_*``; none: every tool) and
optional settings (model, the two per-turn limits, temperature, reasoning). Pure data: loading the
Markdown definitions is forge_lsp.agents' work.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_AGENT = "forge"
BUILTIN, USER, WORKSPACE = "builtin", "user", "workspace"
SOURCE_RANK = {BUILTIN: 0, USER: 1, WORKSPACE: 2}
"""Precedence by id: a workspace agent replaces a user one, which replaces a built-in one."""


@dataclass(frozen=True)
class Agent:
    """One agent as defined: its id, what it is for, its prompt and tools, and what it sets for its turns."""

    id: str
    title: str = ""
    description: str = ""
    prompt: str | None = None
    """The system prompt template (the file's body); None: the built-in system prompt (forge-system-prompt.md)."""
    tools: tuple[str, ...] | None = None
    """Tool names and globs the agent may use; None: every tool."""
    model: str | None = None
    max_tool_failure_per_turn: int | None = None
    max_requests_per_turn: int | None = None
    temperature: float | None = None
    reasoning: dict[str, Any] | None = None
    write_under: tuple[str, ...] = ()
    """Folders (relative to the workspace, ending in '/') the tools that change files are kept to (each tool
    declares its path argument and whether it changes files: ToolDefinition); empty: anywhere."""
    source: str = BUILTIN
    path: str | None = None
    """The definition's file (None for a built-in)."""
    prompt_line: int = 1
    """The body's first line in its file (a template error's line is counted from it)."""

    def allows(self, tool: str) -> bool:
        """Whether the agent may use the tool named tool."""
        return self.tools is None or any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tools)

    def filter(self, names: Iterable[str]) -> list[str]:
        """The names the agent may use, in their order."""
        return [name for name in names if self.allows(name)]

    def write_refused(self, tool: str, rel: str | None) -> str | None:
        """Why the agent may not change rel (the resolved path, relative to the workspace) with tool, a tool that
        changes files, or None; rel None: the tool may change any file (the shell, an MCP tool)."""
        if not self.write_under:
            return None
        folders = ", ".join(self.write_under)
        if rel is None:
            return f"agent {self.id} writes only under {folders}: {tool} may change any file, so it is refused"
        if any(rel.startswith(folder) for folder in self.write_under):
            return None
        return f"agent {self.id} writes only under {folders}: {rel} is refused"

    def summary(self) -> dict[str, Any]:
        """forge.listAgents' entry: {id, title, description, source, tools} (tools null: every tool)."""
        return {
            "id": self.id,
            "title": self.title or self.id,
            "description": self.description,
            "source": self.source,
            "tools": list(self.tools) if self.tools is not None else None,
        }


def not_available(tool: str, agent: str) -> str:
    """The failure a call to a tool the agent lacks gets (the tracker counts it)."""
    return f"tool {tool} is not available to agent {agent}"


_MUSE_PROMPT = """You are Muse, Forge's planning agent, working inside the user's editor.
You study the user's workspace and write a plan; you do not change the code.
Its system information and the project's guidelines come at the start of the conversation.
Paths are relative to the workspace root.

<planning>
- Read the relevant files and search the workspace before you plan; fetch documentation when it helps.
- Write the plan as Markdown under plans/ (for example plans/<short-name>.md): the goal, the files to change,
  the steps in order, how to check each step, and the risks. You may write or patch files under plans/ only.
- Track your own progress with the todo tools; ask the user with followup when something is unclear.
- Available tools: {{#each tool_names}}{{this}}{{#unless @last}}, {{/unless}}{{/each}}.
</planning>

When the plan is written, answer with a short summary and the plan's path, and no tool call.
"""

_SAGE_PROMPT = """You are Sage, Forge's research agent, working inside the user's editor.
You answer questions about the user's workspace; you never change a file or run a command.
Its system information and the project's guidelines come at the start of the conversation.
Paths are relative to the workspace root.

<research>
- Read the files and search the workspace to find the answer; fetch documentation when it helps.
- Cite the files (and lines) your answer rests on; say plainly what you could not find.
- Ask the user with followup when the question is unclear.
- Available tools: {{#each tool_names}}{{this}}{{#unless @last}}, {{/unless}}{{/each}}.
</research>

Answer with what you found, and no tool call.
"""

BUILTIN_AGENTS: tuple[Agent, ...] = (
    Agent(
        id="forge",
        title="Forge",
        description="Implements: reads, changes and tests the code with every tool.",
    ),
    Agent(
        id="muse",
        title="Muse",
        description="Plans: reads and researches, writes plans under plans/ only.",
        prompt=_MUSE_PROMPT,
        tools=("read", "fs_search", "fetch", "todo_*", "followup", "write", "patch", "multi_patch"),
        write_under=("plans/",),
    ),
    Agent(
        id="sage",
        title="Sage",
        description="Researches: read-only, answers questions about the code.",
        prompt=_SAGE_PROMPT,
        tools=("read", "fs_search", "fetch", "followup"),
    ),
)


@dataclass
class AgentSet:
    """Agents by id, the highest-precedence definition of each id winning."""

    agents: dict[str, Agent] = field(default_factory=lambda: {a.id: a for a in BUILTIN_AGENTS})

    def add(self, agent: Agent) -> None:
        found = self.agents.get(agent.id)
        if found is None or SOURCE_RANK[agent.source] >= SOURCE_RANK[found.source]:
            self.agents[agent.id] = agent

    def get(self, agent_id: str) -> Agent | None:
        return self.agents.get(agent_id)

    def ids(self) -> list[str]:
        """The ids: the built-in ones first in their order, then the others sorted."""
        builtin = [a.id for a in BUILTIN_AGENTS]
        return builtin + sorted(i for i in self.agents if i not in builtin)

    def all(self) -> list[Agent]:
        return [self.agents[i] for i in self.ids()]
