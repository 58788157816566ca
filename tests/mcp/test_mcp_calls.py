"""MCP calls in-process: [mcp] confirm asks through the session (Allow / Deny / Allow for this conversation)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mcp_support import flaky

from forge_lsp.core.session import Session, answer, asking
from forge_lsp.domain.config import ForgeConfig, McpConfig
from forge_lsp.domain.events import Event
from forge_lsp.domain.messages import ToolCall
from forge_lsp.domain.questions import PermissionAsked
from forge_lsp.mcp_config import parse_entry
from forge_lsp.tools.base import DiskFiles, ToolContext
from forge_lsp.tools.mcp.manager import McpManager
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

pytestmark = pytest.mark.timeout(60)


async def test_confirm_asks_through_the_session(tmp_path: Path) -> None:
    manager = McpManager({"flaky": parse_entry("flaky", flaky(), "user")}, tmp_path)
    try:
        registry = ToolRegistry(await manager.tool_definitions())
        answers: list[str] = []
        asked: list[tuple[str, str]] = []

        async def ask(tool: str, question: str, call_id: str | None = None) -> str:
            asked.append((tool, question))
            return answers.pop(0)

        def emit(event: Event) -> None:  # the frontend answers the turn's question events with ask
            if isinstance(event, PermissionAsked):
                answer(event, ask)

        session = Session(None, DiskFiles())
        config = replace(ForgeConfig(), mcp=McpConfig(confirm=("mcp_flaky_o*",)))
        ctx = ToolContext(Workspace(tmp_path), config)
        ctx.confirm = lambda tool, question: session.confirm(tool, question, ask=asking(emit, "t1"))

        async def call(name: str) -> tuple[bool, str]:
            result, _ = await registry.call(ToolCall("c", name, json.dumps({})), ctx)
            return result.is_error, result.output

        answers[:] = ["deny"]
        assert await call("mcp_flaky_ok") == (True, "the user denied calling mcp_flaky_ok ([mcp] confirm 'mcp_flaky_o*')")
        answers[:] = ["always"]
        assert await call("mcp_flaky_ok") == (False, "fine")
        assert await call("mcp_flaky_ok") == (False, "fine")  # allowed for this conversation: not asked again
        assert [tool for tool, _ in asked] == ["mcp_flaky_ok", "mcp_flaky_ok"]
        assert asked[0][1] == "Allow the MCP tool ok of the server flaky (mcp_flaky_ok)?"
        ok, text = await call("mcp_flaky_grow")  # no rule matches: never asked
        assert (ok, text, len(asked)) == (False, "added", 2)
        nobody = Session(None, DiskFiles())
        ctx.confirm = lambda tool, question: nobody.confirm(tool, question)
        failed, text = await call("mcp_flaky_ok")
        assert failed and "nobody can be asked here" in text
    finally:
        await manager.close()


async def test_a_huge_output_is_clipped_like_a_shell_commands(tmp_path: Path) -> None:
    manager = McpManager({"flaky": parse_entry("flaky", flaky(), "user")}, tmp_path)
    try:
        registry = ToolRegistry(await manager.tool_definitions())
        config = replace(ForgeConfig(), max_stdout_prefix_lines=3, max_stdout_suffix_lines=2)
        result, _ = await registry.call(
            ToolCall("c", "mcp_flaky_lines", json.dumps({"count": 1000})), ToolContext(Workspace(tmp_path), config)
        )
        assert result.output.splitlines() == ["line 1", "line 2", "line 3", "... [995 lines cut] ...", "line 999", "line 1000"]
    finally:
        await manager.close()
