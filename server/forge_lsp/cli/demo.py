"""forge-lsp demo: the builtin demo turn in a workspace of its own, in-process or through the real server.

Through the server, it is a real turn driven as an LSP client would drive it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

from forge_lsp.cli.exit_codes import EXIT_CODES, EXIT_FAILED, EXIT_INTERRUPTED
from forge_lsp.cli.headless import run_headless
from forge_lsp.cli.parser import UsageError
from forge_lsp.domain.events import format_reason
from forge_lsp.render import EventPrinter, say

DEMO_FILES = {
    "app.cfg": "[server]\nhost: localhost\nport: 8080\n",
    ".forge.toml": 'model = "scripted/demo"\n\n[retry]\nmin_delay_ms = 200\n',
    "README.md": "A tiny project for the forge-lsp demo.\n",
}
DEMO_PROMPT = "Change the server port in app.cfg to 9090."


NAMED_AT_MOST = 5


def check_demo_folder(folder: Path) -> None:
    """UsageError unless folder is missing or empty: the demo writes its own files and runs an agent there.

    It never overwrites a file, nor mixes its files and turn with a folder of the user's own.
    """
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UsageError(f"demo workspace {folder} is not a folder")
    present = sorted(p.name for p in folder.iterdir())
    if not present:
        return
    named = ", ".join(present[:NAMED_AT_MOST]) + (
        f" and {len(present) - NAMED_AT_MOST} more" if len(present) > NAMED_AT_MOST else ""
    )
    *rest, last = sorted(DEMO_FILES)
    written = f"{', '.join(rest)} and {last}"
    raise UsageError(
        f"demo workspace {folder} is not empty ({named}): the demo writes its own {written} there and runs "
        "a turn in it; give a new or empty folder, or leave out --workspace for a temporary one"
    )


def make_demo_workspace(folder: Path | None = None) -> Path:
    """A workspace with the files the builtin demo script expects: a temporary one, or folder (new or empty).

    A file that is already there is never overwritten (FileExistsError).
    """
    root = folder or Path(tempfile.mkdtemp(prefix="forge-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    for name, content in DEMO_FILES.items():
        with (root / name).open("x", encoding="utf-8") as f:
            f.write(content)
    return root


NEXT = (
    'next: a turn of your own, `forge-lsp run "explain this project" --model scripted/echo` (any litellm model: '
    "docs/models.md); your editor's lines, `forge-lsp --print-editor-config`"
)


def run_demo(folder: Path | None, in_process: bool, keep: bool, out: TextIO) -> int:
    """The demo turn in a workspace of its own; a temporary one is removed afterwards unless keep."""
    temporary = folder is None
    root = make_demo_workspace(folder)
    try:
        say(out, f"forge-lsp demo: workspace {root}\n")
        if in_process:
            code = asyncio.run(run_headless(DEMO_PROMPT, root, None, out, trusted=True))  # it wrote the files
        else:
            code = asyncio.run(run_demo_through_server(root, DEMO_PROMPT, out))
        if temporary and not keep:
            say(out, "\ntemporary workspace removed (forge-lsp demo --keep keeps it, with the turn's transcript)")
        else:
            say(out, f"\ntranscripts: {root / '.forge' / 'transcripts'}")
        say(out, NEXT)
    finally:
        if temporary and not keep:
            shutil.rmtree(root, ignore_errors=True)
    # The demo is meant to end in an interrupt: that is success for it.
    return 0 if code == EXIT_INTERRUPTED else 1


def _plain(value: Any) -> Any:
    """pygls hands custom notifications over as attribute objects; make them dicts again."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: _plain(v) for k, v in vars(value).items()}
    return value


async def run_demo_through_server(root: Path, prompt: str, out: TextIO) -> int:
    """Start `forge-lsp` over stdio, run forge.run, and print what an editor would show."""
    client = LanguageClient("forge-lsp-demo", "1")
    printer = EventPrinter(out)
    diagnostics: dict[str, list[t.Diagnostic]] = {}
    offers: list[str] = []

    @client.feature("forge/event")
    def on_event(params: Any) -> None:
        printer(_plain(params))

    @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: t.PublishDiagnosticsParams) -> None:
        diagnostics[params.uri] = list(params.diagnostics)

    @client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_progress_create(params: t.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_message_request(params: t.ShowMessageRequestParams) -> None:
        offers.append(f"{params.message} [{', '.join(a.title for a in params.actions or [])}]")
        return None

    @client.feature(t.WINDOW_SHOW_MESSAGE)
    def on_message(params: t.ShowMessageParams) -> None:
        say(out, f"  [window/showMessage {params.type.name}] {params.message}")

    @client.feature(t.PROGRESS)
    def on_progress(params: t.ProgressParams) -> None:
        return None  # the same steps arrive as forge/event, printed above

    @client.feature(t.WINDOW_LOG_MESSAGE)
    def on_log(params: t.LogMessageParams) -> None:
        return None

    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    await client.start_io(sys.executable, "-m", "forge_lsp", env=env)
    try:
        await client.initialize_async(
            t.InitializeParams(
                capabilities=t.ClientCapabilities(window=t.WindowClientCapabilities(work_done_progress=True)),
                root_uri=root.as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                # The demo wrote the workspace's .forge.toml itself a moment ago: it trusts it.
                initialization_options={"workspaceTrusted": True},
            )
        )
        client.initialized(t.InitializedParams())
        say(out, "LSP: initialize done; workspace/executeCommand forge.run ...\n")
        result = await client.workspace_execute_command_async(
            t.ExecuteCommandParams(command="forge.run", arguments=[{"prompt": prompt}])
        )
        printer.flush_text()
        if not isinstance(result, dict):
            say(out, f"forge.run returned {result!r}")
            return EXIT_FAILED
        reason = result.get("reason")
        say(out, f"\nforge.run result: status {result['status']}" + (f", reason {format_reason(reason)}" if reason else ""))
        for uri, items in sorted(diagnostics.items()):
            if not items:
                continue
            counts = Counter(f"{d.severity.name if d.severity else '?'} {d.code}" for d in items)
            where = Path(uri.removeprefix("file://")).relative_to(root)
            say(out, f"diagnostics on {where}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
            for d in items:
                say(out, f"  line {d.range.start.line + 1}: {d.message}")
        if not offers:
            # The Continue offer is sent after the result; give it a moment to arrive.
            for _ in range(20):
                if offers:
                    break
                await asyncio.sleep(0.05)
        for offer in offers:
            say(out, f"window/showMessageRequest: {offer}  (the demo declines)")
        return EXIT_CODES.get(result["status"], EXIT_FAILED)
    finally:
        try:
            await client.shutdown_async(None)
            client.exit(None)
        finally:
            await client.stop()
