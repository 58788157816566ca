"""initialize answers before the runtime is imported: what a turn needs (config, agents, tools, state, the
CLI's commands, litellm, pybars3, YAML, MCP) loads after the answer, so a cold start stays close to a bare
pygls server's (bench: cold start to initialize result, ≤ 1.3×).

The modules come from the interpreter's own import log (PYTHONPROFILEIMPORTTIME), read once initialize is
answered and before anything else is sent."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)

LATER = (
    "litellm",
    "pybars",
    "yaml",
    "mcp",
    "jsonschema",
    "sqlite3",
    "forge_lsp.core.runtime",
    "forge_lsp.core.session",
    "forge_lsp.core.orchestrator",
    "forge_lsp.agents",
    "forge_lsp.mcp_config",
    "forge_lsp.tools",
    "forge_lsp.state",
    "forge_lsp.llm",
    "forge_lsp.cli.headless",
    "forge_lsp.cli.commands",
)
"""Imported after initialize's answer (on `initialized`, or by the command that needs them)."""


def imported_by_initialize(tmp_path: Path, *args: str) -> list[str]:
    """The modules `forge-lsp ARGS` imported by the time it answered initialize (no `initialized` sent)."""
    log = tmp_path / "imports.txt"
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "FORGE_LSP_WARMUP_DELAY": "off"}
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "forge_lsp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        params = {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()
        length = 0
        while (line := proc.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        answer = json.loads(proc.stdout.read(length))
        assert answer.get("id") == 1 and "capabilities" in answer["result"], answer
        time.sleep(0.3)  # anything the answer set off in the background (there should be nothing) is logged too
        text = log.read_text()
    finally:
        proc.stdin.close()
        proc.wait(10)
    return IMPORTED.findall(text)


def loaded_early(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in LATER)]


def test_initialize_answers_before_the_runtime_is_imported(tmp_path: Path) -> None:
    modules = imported_by_initialize(tmp_path)
    assert "forge_lsp.lsp.server" in modules and "pygls" in modules  # the log is the server's
    assert loaded_early(modules) == []


def test_the_check_sees_a_module_imported_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import yaml\n")  # loaded by every Python that starts with it
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    assert "yaml" in loaded_early(imported_by_initialize(tmp_path))
