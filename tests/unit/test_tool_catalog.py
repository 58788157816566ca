"""The tool catalog: each built-in tool declared once, and every list of tools derived from it."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import get_args

import pytest
from acp.schema import ToolKind as AcpToolKind

from forge_lsp.acp.conversions import TITLE_IN_BACKTICKS
from forge_lsp.core.orchestrator import describe
from forge_lsp.domain import tool_catalog
from forge_lsp.domain.agents import BUILTIN_AGENTS
from forge_lsp.domain.config import TOOL_NAMES
from forge_lsp.domain.messages import ToolCall
from forge_lsp.domain.tool_catalog import CATALOG, ToolFacts
from forge_lsp.tools.registry import ALL_TOOLS, ToolRegistry, builtin

from fakes import FakeModel, Harness, answer, call, tools


def test_the_registry_is_the_catalog_in_its_order() -> None:
    assert [t.name for t in ALL_TOOLS] == [f.name for f in CATALOG] == ToolRegistry().names() == list(TOOL_NAMES)
    for tool, facts in zip(ALL_TOOLS, CATALOG, strict=True):
        assert (tool.kind, tool.path_arg, tool.changes_files) == (facts.kind, facts.path_arg, facts.changes_files), tool.name


def test_each_entry_names_arguments_its_schema_has_and_a_kind_acp_has() -> None:
    for tool, facts in zip(ALL_TOOLS, CATALOG, strict=True):
        properties = set(tool.parameters["properties"])
        for arg in (facts.path_arg, facts.title_arg):
            assert arg is None or arg in properties, (facts.name, arg)
        assert facts.kind in get_args(AcpToolKind), facts.name
        assert facts.kind in get_args(tool_catalog.ToolKind), facts.name
    assert len({f.name for f in CATALOG}) == len(CATALOG)


def test_an_entry_without_its_implementation_is_refused() -> None:
    with pytest.raises(AttributeError):
        builtin(ToolFacts("probe", "read.NO_SUCH_TOOL", "read"))
    with pytest.raises(TypeError, match="not a tool's Implementation"):
        builtin(ToolFacts("probe", "read.run", "read"))


def test_the_builtin_agents_name_only_catalog_tools() -> None:
    for agent in BUILTIN_AGENTS:
        for pattern in agent.tools or ():
            assert fnmatch.filter(TOOL_NAMES, pattern), (agent.id, pattern)


def test_kinds_and_titles_come_from_the_catalog() -> None:
    assert tool_catalog.kind_of("multi_patch") == "edit" and tool_catalog.kind_of("remove") == "delete"
    assert tool_catalog.kind_of("mcp_github_create_issue") == "other"
    assert TITLE_IN_BACKTICKS == {"shell": "command", "fs_search": "pattern", "fetch": "url"}
    # A built-in tool by the argument its entry names (a search by what it looks for, not where)...
    assert describe(ToolCall("1", "fs_search", '{"pattern": "TODO", "path": "src"}')) == "fs_search: TODO"
    assert describe(ToolCall("2", "remove", '{"path": "a.py"}')) == "remove: a.py"
    assert describe(ToolCall("3", "todo_write", '{"todos": []}')) == "todo_write"
    # ...and an MCP tool by the first of the usual arguments it has.
    assert describe(ToolCall("4", "mcp_x_open", '{"url": "https://example.org", "path": "b"}')) == "mcp_x_open: b"


async def test_the_tool_events_carry_the_kind(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    batch = tools(
        call("read", "r", file_path="a.txt"),
        call("patch", "p", file_path="a.txt", old_string="hello", new_string="bye"),
        call("remove", "d", path="a.txt"),
        call("mcp_nowhere_thing", "m"),
    )
    h = Harness(workspace, FakeModel([batch, answer("done")]))
    await h.run()
    started = {e.call_id: e.to_dict()["kind"] for e in h.of("toolCallStarted")}
    finished = {e.call_id: (e.to_dict()["kind"], e.ok) for e in h.of("toolCallFinished")}
    assert started == {"r": "read", "p": "edit", "d": "delete", "m": "other"}
    assert finished == {"r": ("read", True), "p": ("edit", True), "d": ("delete", True), "m": ("other", False)}
