"""The docs' loopback option in one command: `python -m tests.support.openai_server`, then forge-lsp run against it
with no API key in the environment."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from support import forkserver
from support.processes import ctrl_c_as_in_a_terminal

REPO = Path(__file__).resolve().parents[2]


def test_the_loopback_server_is_one_command_and_needs_no_api_key(tmp_path: Path) -> None:
    (tmp_path / "behaviours.json").write_text(json.dumps([{"text": "hello from the loopback server"}]))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", str(tmp_path / "behaviours.json")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=ctrl_c_as_in_a_terminal,  # it stops on Ctrl-C (SIGINT), below
    )
    try:
        assert server.stdout is not None
        said = server.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/v1) ", said)
        assert url, said
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / ".forge.toml").write_text(f'model = "openai/local"\napi_base = "{url[1]}"\n')
        p = subprocess.run(
            [*forkserver.command(), "run", "hello", "--trust", "-w", str(workspace)],
            capture_output=True,
            text=True,
            timeout=90,
            env={**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        assert p.returncode == 0, p.stdout + p.stderr
        assert "hello from the loopback server" in p.stdout and "■ turn completed: 1 request" in p.stdout, p.stdout
        # It reports the prompt's tokens as a server counts them: no warning that it drops the tools (a newcomer
        # was told so by the stub's fixed 11 prompt tokens).
        assert "does not pass tools" not in p.stdout + p.stderr, p.stdout + p.stderr
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=15)
    assert server.returncode == 0, server.stderr.read() if server.stderr else ""
