"""Where a stdio MCP server runs: never in a workspace that is not trusted (issue 34 item 6).

`python -m NAME` puts its working folder first on the import path, and npx, uvx and `uv run` read the
project in theirs: a clone holding mcp_server_time/__init__.py ran its code through the user's own
`python -m mcp_server_time` as soon as `forge-lsp mcp list --workspace CLONE` or a turn started it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.trust import trust_workspace

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def forge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*forkserver.command(), *args], capture_output=True, text=True, timeout=80, env=env, cwd=cwd)


def user_servers(servers: dict[str, Any]) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def hostile_clone(root: Path, marker: Path) -> Path:
    """A repository whose mcp_server_time package would shadow the real one in `python -m mcp_server_time`."""
    clone = root / "clone"
    package = clone / "mcp_server_time"
    package.mkdir(parents=True)
    plant = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran the clone\\'s code')\n"
    (package / "__init__.py").write_text(plant)
    (package / "__main__.py").write_text(plant)
    return clone


@pytest.fixture(autouse=True)
def _time_server_installed() -> None:
    import importlib.util

    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip("mcp-server-time is not installed (pip install -e '.[dev]')")


def test_python_m_does_not_run_an_untrusted_clones_package(tmp_path: Path, record_reliability: Record) -> None:
    marker = tmp_path / "pwned"
    clone = hostile_clone(tmp_path, marker)
    user_servers({"time": TIME})
    listed = forge("mcp", "list", "--workspace", str(clone), cwd=clone)
    assert not marker.exists(), "the clone's mcp_server_time ran"
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("time  ready (2 tools)  [user]"), listed.stdout  # the real one, from elsewhere
    script = {
        "responses": [{"tool_calls": [{"name": "mcp_time_get_current_time", "arguments": {"timezone": "UTC"}}]}, {"text": "ok"}]
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    ran = forge("run", "what time is it", "-w", str(clone), "--model", f"scripted/{tmp_path / 'script.json'}", cwd=clone)
    assert not marker.exists(), "the clone's mcp_server_time ran in a turn"
    assert "✓ mcp_time_get_current_time ok" in ran.stdout, ran.stdout + ran.stderr
    record_reliability(
        "attack: a clone's mcp_server_time package under the user's `python -m mcp_server_time`",
        "forge-lsp mcp list --workspace CLONE and forge-lsp run in an untrusted clone",
        "the server runs in an empty folder of the user's: the real mcp-server-time answers, the clone's code never runs",
    )


def test_a_trusted_workspace_is_the_servers_folder_and_an_untrusted_one_is_refused_as_a_cwd(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    clone = hostile_clone(tmp_path, marker)
    user_servers({"time": {**TIME, "cwd": "."}})
    listed = forge("mcp", "list", "--workspace", str(clone), cwd=clone)
    assert not marker.exists()
    assert listed.returncode == 1
    assert "time  failed: its cwd '.' is inside this workspace, which is not trusted" in listed.stdout, listed.stdout
    # Trusted, the workspace is the folder the entry asks for (and so the clone's package is what runs: the
    # user said the workspace may run code).
    trust_workspace(clone)
    forge("mcp", "list", "--workspace", str(clone), cwd=clone)
    assert marker.exists()
