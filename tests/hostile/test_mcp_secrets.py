"""What an MCP entry's ${NAME} expanded to stays out of everything shown and logged (issue 34 item 11).

The user writes `"url": "https://host/${ACCOUNT}"` or `"args": ["--token", "${TOKEN}"]` so that the value lives
in their environment, not in a file: a failure's reason (forge.status mcp[].reason, the editors' lists, the
chat), a config problem and the -v log must not print it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.mcp_config import parse_entry
from forge_lsp.tools.mcp.manager import McpManager

from support import forkserver

pytestmark = pytest.mark.timeout(60)

Record = Callable[[str, str, str], None]
ACCOUNT = "acc-" + "7f3e9b2c4d1a"
TOKEN = "tok-" + "5c8d2e7f9a0b"


async def test_a_failure_reason_does_not_show_what_a_name_expanded_to(tmp_path: Path, record_reliability: Record) -> None:
    env = {"ACCOUNT_ID": ACCOUNT, "SERVICE_PASSPHRASE_X": TOKEN, "PATH": os.environ["PATH"]}
    specs = {
        # A url naming the account: "cannot connect to http://...": the reason names the url.
        "remote": parse_entry("remote", {"url": "http://127.0.0.1:9/${ACCOUNT_ID}/mcp"}, "user", env),
        # A server that says its arguments on stderr as it fails: the reason quotes what it said.
        "local": parse_entry(
            "local",
            {
                "command": sys.executable,
                "args": ["-c", "import sys; sys.exit('bad token ' + sys.argv[1])", "${SERVICE_PASSPHRASE_X}"],
            },
            "user",
            env,
        ),
    }
    manager = McpManager(specs, tmp_path, startup_timeout=20)
    try:
        await manager.wait_started()
        status = {s["name"]: s for s in manager.status()}
    finally:
        await manager.close()
    assert (
        status["remote"]["state"] == "failed"
        and "cannot connect to http://127.0.0.1:9/[REDACTED]/mcp" in status["remote"]["reason"]
    )
    assert status["local"]["state"] == "failed" and "bad token [REDACTED]" in status["local"]["reason"], status["local"]
    assert ACCOUNT not in json.dumps(status) and TOKEN not in json.dumps(status)
    record_reliability(
        "attack: MCP failure reasons carrying an expanded ${NAME}",
        "a url with ${ACCOUNT_ID} that cannot connect; a server that prints its ${...} argument as it exits",
        "forge.status mcp[].reason says [REDACTED] in their place",
    )


def test_a_config_problem_does_not_show_what_a_name_expanded_to() -> None:
    with pytest.raises(ValueError) as caught:
        parse_entry("bad", {"url": "${ACCOUNT_URL}"}, "user", {"ACCOUNT_URL": "ftp://" + ACCOUNT})
    assert ACCOUNT not in str(caught.value) and "[REDACTED]" in str(caught.value)


def test_the_verbose_log_does_not_show_what_a_name_expanded_to(tmp_path: Path, record_reliability: Record) -> None:
    config = tmp_path / "xdg" / "forge-lsp"
    config.mkdir(parents=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"remote": {"url": "http://127.0.0.1:9/${ACCOUNT_ID}/mcp"}}}))
    log = tmp_path / "forge.log"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "ACCOUNT_ID": ACCOUNT, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [*forkserver.command(), "-vv", "mcp", "list", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
    )
    assert done.returncode == 1  # the server failed
    assert "MCP server remote failed: cannot connect to http://127.0.0.1:9/[REDACTED]/mcp" in done.stderr, done.stderr[-2000:]
    assert ACCOUNT not in done.stderr and ACCOUNT not in done.stdout
    again = subprocess.run(
        [*forkserver.command(), "-vv", "--log-file", str(log), "mcp", "list", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
    )
    assert again.returncode == 1 and "[REDACTED]" in log.read_text() and ACCOUNT not in log.read_text()
    record_reliability(
        "attack: the -v log and --log-file of a failing MCP server whose url has an expanded ${NAME}",
        "forge-lsp -vv mcp list, to stderr and to --log-file",
        "every log line redacted ([REDACTED] in the url)",
    )
