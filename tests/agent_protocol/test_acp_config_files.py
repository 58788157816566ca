"""ACP clients say nothing of files: the agent checks the config files on disk (core/file_poll.py) while it runs.
A change of the user's config.toml applies at the next prompt; a workspace whose files changed from outside
after it was trusted is no longer trusted, and the next prompt says so."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from test_acp import Recorder, start, workspace_with

from forge_lsp.trust import TrustStore

pytestmark = pytest.mark.timeout(60)


async def prompt_until(conn: Any, client: Recorder, session_id: str, seen: str, timeout: float = 15.0) -> str:
    """Prompt again (each a whole turn) until the turn's chat has `seen`; the text of that turn."""
    deadline = time.monotonic() + timeout
    while True:
        before = len(client.text())
        await conn.prompt(session_id=session_id, prompt=[text_block("hi")])
        said = client.text()[before:]
        if seen in said:
            return said
        assert time.monotonic() < deadline, f"never said {seen!r}; the last turn said {said!r}"
        await asyncio.sleep(0.3)


async def test_a_model_changed_in_the_users_config_applies_at_the_next_prompt(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("[retry]\nmin_delay_ms = 1\n")  # the workspace names no model
    for name in ("a", "b"):
        (workspace / f"{name}.json").write_text(json.dumps({"responses": [{"text": f"model {name.upper()}"}] * 50}))
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f'model = "scripted/{workspace / "a.json"}"\n')
    client = Recorder()
    ctx, conn = (await start(client))[:2]
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert "model A" in await prompt_until(conn, client, session.session_id, "model A", timeout=0)
        user_config.write_text(f'model = "scripted/{workspace / "b.json"}"\n')
        assert "model B" in await prompt_until(conn, client, session.session_id, "model B")
    finally:
        await ctx.__aexit__(None, None, None)


async def test_a_trusted_workspace_changed_from_outside_says_at_the_next_prompt_it_is_not_trusted(workspace: Path) -> None:
    workspace_with(workspace, *[{"text": "fine"}] * 50)
    client = Recorder()
    ctx, conn = (await start(client))[:2]
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = await prompt_until(conn, client, session.session_id, "fine", timeout=0)
        assert "not trusted" not in first
        # A git pull (no client involved) adds a key trust covers: the old trusted settings no longer apply.
        config = workspace / ".forge.toml"
        config.write_text(config.read_text() + 'api_base = "http://127.0.0.1:9/v1"\n')
        said = await prompt_until(conn, client, session.session_id, "is not trusted")
        assert "is not trusted (its files changed since you trusted it)" in said
        assert "forge-lsp trust" in said and "fine" not in said
    finally:
        await ctx.__aexit__(None, None, None)


async def test_a_revoked_workspace_is_said_to_be_revoked(workspace: Path) -> None:
    """Why it is not trusted comes from the core (WorkspaceRuntime.untrusted_since), as in `forge-lsp run`."""
    workspace_with(workspace, *[{"text": "fine"}] * 50)
    TrustStore().revoke(workspace)  # forge-lsp trust --revoke
    client = Recorder()
    ctx, conn = (await start(client))[:2]
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        said = await prompt_until(conn, client, session.session_id, "is not trusted", timeout=0)
        assert f"{workspace} is not trusted (you revoked its trust), so" in said, said
        assert "fine" not in said
    finally:
        await ctx.__aexit__(None, None, None)


async def test_a_typo_in_the_users_config_is_said_in_the_chat_once(workspace: Path) -> None:
    """ACP clients show no agent log: a bad key is said in the next prompt's chat, as `forge-lsp run` prints it."""
    workspace_with(workspace, *[{"text": "fine"}] * 50)
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    client = Recorder()
    ctx, conn = (await start(client))[:2]
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert "problems in the config" not in await prompt_until(conn, client, session.session_id, "fine", timeout=0)
        user_config.write_text("[tools.shel]\nmax_failures = 2\n")
        said = await prompt_until(conn, client, session.session_id, "problems in the config")
        assert f"- {user_config}:2: tools.shel.max_failures: unknown key (did you mean tools.shell.max_failures?)" in said
        assert "fine" in said  # the rest of the config applies: the turn ran
        again = await prompt_until(conn, client, session.session_id, "fine", timeout=0)
        assert "problems in the config" not in again  # said once
    finally:
        await ctx.__aexit__(None, None, None)
