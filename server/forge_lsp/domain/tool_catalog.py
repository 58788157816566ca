"""The built-in tools' catalog: one entry per tool, and every fact about a tool derived from it.

An entry says what a tool IS: its name, where its implementation is (the module that declares its
description, input schema and how it runs), its kind, the argument that names its file, whether it changes
files, and how one call of it is summed up in a line. Everything else reads these facts: the registry's
tools and their order, the configuration's [tools.<name>] tables, the agents' write limit, ACP's tool kinds,
the kind on forge/event's toolCallStarted (what the editors show an edit by), a call's title, compaction's
summary of a call, the failures an edit makes good. Adding a built-in tool is its module, one entry here and
its section in docs/tools.md (tests/unit/test_docs.py checks the two are the same).

Pure data (domain): the core, which may not import the tools, reads the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ToolKind = Literal["read", "edit", "delete", "execute", "search", "fetch", "think", "other"]
"""ACP's ToolKind names (those a Forge tool is): what a client shows a call as. "other": an MCP tool."""

SummaryTool = Literal["file_update", "file_read", "file_remove", "search", "shell", "todo_write"]
"""How Forge's compaction summary (forge-partial-summary-frame.md, SummaryTool) shows a call."""


@dataclass(frozen=True)
class ToolFacts:
    """One built-in tool, declared once."""

    name: str
    """The name the model calls it by (Forge's)."""
    implementation: str
    """Where its description, input schema and run are: "module.ATTRIBUTE" in forge_lsp.tools."""
    kind: ToolKind
    path_arg: str | None = None
    """The argument that names the one workspace file (or folder) a call acts on; None: no such argument."""
    changes_files: bool = False
    """Whether a call may change the workspace's files (its path_arg's file; or any file, with no path_arg)."""
    title_arg: str | None = None
    """The argument that sums a call up in one line ("shell: pytest", "read: src/a.py"); None: the name alone."""
    summary_tool: SummaryTool | None = None
    """How a compaction's summary shows a call of it (Forge's SummaryTool); None: it does not show it."""


CATALOG: tuple[ToolFacts, ...] = (
    ToolFacts("read", "read.TOOL", "read", path_arg="file_path", title_arg="file_path", summary_tool="file_read"),
    ToolFacts(
        "write", "write.TOOL", "edit", path_arg="file_path", changes_files=True, title_arg="file_path", summary_tool="file_update"
    ),
    ToolFacts(
        "patch",
        "patch.PATCH",
        "edit",
        path_arg="file_path",
        changes_files=True,
        title_arg="file_path",
        summary_tool="file_update",
    ),
    ToolFacts(
        "multi_patch",
        "patch.MULTI_PATCH",
        "edit",
        path_arg="file_path",
        changes_files=True,
        title_arg="file_path",
        summary_tool="file_update",
    ),
    ToolFacts(
        "remove", "remove.TOOL", "delete", path_arg="path", changes_files=True, title_arg="path", summary_tool="file_remove"
    ),
    ToolFacts("undo", "undo.TOOL", "edit", path_arg="path", changes_files=True, title_arg="path"),
    ToolFacts("fs_search", "fs_search.TOOL", "search", path_arg="path", title_arg="pattern", summary_tool="search"),
    ToolFacts("shell", "shell.TOOL", "execute", changes_files=True, title_arg="command", summary_tool="shell"),
    ToolFacts("fetch", "fetch.TOOL", "fetch", title_arg="url"),
    ToolFacts("todo_write", "todo.TODO_WRITE", "think", summary_tool="todo_write"),
    ToolFacts("todo_read", "todo.TODO_READ", "think"),
    ToolFacts("followup", "followup.TOOL", "think", title_arg="question"),
)
"""The built-in tools, in the order the model is given them."""

BY_NAME: dict[str, ToolFacts] = {facts.name: facts for facts in CATALOG}

TOOL_NAMES: tuple[str, ...] = tuple(BY_NAME)
"""The built-in tools' names."""


def facts(name: str) -> ToolFacts | None:
    """A built-in tool's entry, or None (an MCP tool, a name the model made up)."""
    return BY_NAME.get(name)


def kind_of(name: str) -> ToolKind:
    """What a call of this tool is, as ACP names it; "other" for a tool that is not built in."""
    found = BY_NAME.get(name)
    return found.kind if found is not None else "other"
