"""Reading what an attacker made (issue 34 item 4): every read of a workspace file for trust, config and
definitions is of a regular file inside the workspace, size-capped and never blocking. A link to /dev/zero, a
FIFO or a huge sparse file among the trust-relevant files gets a clear refusal, no memory blow-up and no
wedged thread. The servers here run under a memory limit, so that a regression fails instead of eating the
machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.rawlsp import RawClient, rss_mb

pytestmark = pytest.mark.timeout(150)

Record = Callable[[str, str, str], None]
LIMIT_KB = 4_000_000
"""The address space the servers and CLIs here may have (about 4 GB: threads reserve stacks and malloc arenas,
but a read of /dev/zero reaches it in seconds)."""
LIMITED = ["sh", "-c", f'ulimit -v {LIMIT_KB}; exec "$0" -m forge_lsp "$@"', sys.executable]


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*LIMITED, *args], capture_output=True, text=True, env=env, timeout=timeout)


def mcp_entry(workspace: Path) -> None:
    """An .mcp.json entry: the workspace has something trust must ignore, so the server asks (and fingerprints)."""
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"helper": {"command": "true"}}}))


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """call()'s result, or a failure when it has not answered within seconds (a wedged server)."""
    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert found, f"no answer within {seconds} s: the server is wedged"
    return found[0]


def execute(client: RawClient, command: str, arg: dict[str, Any] | None = None) -> Any:
    return client.request("workspace/executeCommand", {"command": command, "arguments": [arg or {}]})


def test_a_forge_toml_linked_to_dev_zero(workspace: Path, record_reliability: Record) -> None:
    (workspace / ".forge.toml").symlink_to("/dev/zero")
    mcp_entry(workspace)
    started = time.monotonic()
    done = cli("trust", str(workspace))
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode != 0 and ".forge.toml is a link outside the workspace (to /dev/zero)" in done.stderr, done.stderr
    assert time.monotonic() - started < 30
    assert cli("trust", str(workspace), "--status").returncode == 1
    client = RawClient(LIMITED, settings={})
    try:
        client.initialize(workspace, trusted=True)  # the editor trusts it: the server checks it as `trust` does
        client.notify("initialized", {})
        status = within(30, lambda: execute(client, "forge.status"))
        time.sleep(1)  # the fingerprint of the Trust question, were it read from /dev/zero, is under way
        within(30, lambda: execute(client, "forge.status"))
        memory = rss_mb(client.proc.pid)
    finally:
        client.close()
    assert status["trusted"] is False
    assert memory < 600, f"{memory:.0f} MB"
    assert any(".forge.toml: it points outside the workspace (/dev/zero)" in line for line in client.logs), client.logs
    record_reliability(
        "attack: .forge.toml linked to /dev/zero",
        ".forge.toml -> /dev/zero with an .mcp.json entry: forge-lsp trust DIR, the language server (told trusted)",
        "never read: 'cannot be trusted: .forge.toml is a link outside the workspace (to /dev/zero)'; the config "
        "says it points outside the workspace; the server stays small and answers",
    )


def test_a_forge_toml_fifo_wedges_nothing(workspace: Path, record_reliability: Record) -> None:
    os.mkfifo(workspace / ".forge.toml")
    mcp_entry(workspace)
    done = cli("trust", str(workspace), timeout=30)  # it used to block forever opening the FIFO
    assert done.returncode != 0 and ".forge.toml is not a regular file" in done.stderr, done.stderr
    client = RawClient(LIMITED, settings={"model": "scripted/echo"})
    uri = (workspace / ".forge.toml").as_uri()
    try:
        client.initialize(workspace, trusted=False)
        client.notify("initialized", {})
        # The editor opens the FIFO (an empty buffer) and saves it, again and again: each reads the config again
        # and fingerprints the workspace for the Trust question.
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "toml", "version": 1, "text": ""}})
        for _ in range(40):
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        status = within(30, lambda: execute(client, "forge.status"))
        summary = within(60, lambda: execute(client, "forge.run", {"prompt": "hello"}))  # a turn needs a worker thread
    finally:
        client.close()
    assert status["trusted"] is False
    assert summary["status"] == "completed", summary
    record_reliability(
        "attack: .forge.toml as a FIFO",
        "a FIFO in .forge.toml's place with an .mcp.json entry; the editor opens and saves it 40 times, then a turn",
        "never opened for reading: trust refuses ('not a regular file'), no worker thread blocks, the turn runs",
    )


def test_a_huge_sparse_script_is_refused_not_hashed(workspace: Path, record_reliability: Record) -> None:
    from forge_lsp.trust import MAX_TRUST_FILE_BYTES, TrustStore, fingerprint, refusal

    (workspace / ".forge.toml").write_text('model = "scripted/big.json"\n')
    with (workspace / "big.json").open("wb") as f:
        f.truncate(3 * 1024**3)  # 3 GB, no disk used
    started = time.monotonic()
    assert "is 3221225472 bytes, over the 4 MiB" in (refusal(workspace) or "")
    fingerprint(workspace)
    assert time.monotonic() - started < 5, "the 3 GB were read"
    done = cli("trust", str(workspace))
    assert done.returncode != 0 and "big.json is 3221225472 bytes" in done.stderr, done.stderr
    assert not TrustStore().is_trusted(workspace)
    # A file just under the limit is still trusted (the limit is not a blanket refusal).
    with (workspace / "big.json").open("r+b") as f:
        f.truncate(MAX_TRUST_FILE_BYTES)
    assert refusal(workspace) is None
    record_reliability(
        "attack: a huge sparse file among the trust-relevant files",
        "the scripted model's script is a 3 GB sparse file: every trust check would hash it all",
        f"a trust-relevant file over {MAX_TRUST_FILE_BYTES // 1024**2} MiB cannot be trusted, said at once; nothing is read",
    )
