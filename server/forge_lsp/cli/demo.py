"""forge-lsp demo: the builtin demo turn in a workspace of its own, in-process or through the real server."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import TextIO

from forge_lsp.cli.exit_codes import EXIT_INTERRUPTED
from forge_lsp.cli.headless import run_headless
from forge_lsp.render import say

DEMO_FILES = {
    "app.cfg": "[server]\nhost: localhost\nport: 8080\n",
    ".forge.toml": 'model = "scripted/demo"\n\n[retry]\nmin_delay_ms = 200\n',
    "README.md": "A tiny project for the forge-lsp demo.\n",
}
DEMO_PROMPT = "Change the server port in app.cfg to 9090."


def make_demo_workspace(folder: Path | None = None) -> Path:
    """A temporary workspace with the files the builtin demo script expects."""
    root = folder or Path(tempfile.mkdtemp(prefix="forge-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    for name, content in DEMO_FILES.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def run_demo(folder: Path | None, in_process: bool, keep: bool, out: TextIO) -> int:
    """The demo turn in a workspace of its own; a temporary one is removed afterwards unless keep."""
    temporary = folder is None
    root = make_demo_workspace(folder)
    try:
        say(out, f"forge-lsp demo: workspace {root}\n")
        if in_process:
            code = asyncio.run(run_headless(DEMO_PROMPT, root, None, out, trusted=True))  # it wrote the files
        else:
            from forge_lsp.lsp.demo import run_demo_through_server

            code = asyncio.run(run_demo_through_server(root, DEMO_PROMPT, out))
        if temporary and not keep:
            say(out, "\ntemporary workspace removed (forge-lsp demo --keep keeps it, with the turn's transcript)")
        else:
            say(out, f"\ntranscripts: {root / '.forge' / 'transcripts'}")
    finally:
        if temporary and not keep:
            shutil.rmtree(root, ignore_errors=True)
    # The demo is meant to end in an interrupt: that is success for it.
    return 0 if code == EXIT_INTERRUPTED else 1
