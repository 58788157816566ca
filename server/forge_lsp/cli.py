"""forge-lsp: the language server (stdio or TCP), a headless `run`, and the `demo`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from forge_lsp import __version__

EXIT_COMPLETED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_CANCELLED = 0, 1, 3, 130
EXIT_CODES = {"completed": EXIT_COMPLETED, "interrupted": EXIT_INTERRUPTED, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}

DEMO_FILES = {
    "app.cfg": "[server]\nhost: localhost\nport: 8080\n",
    ".forge.toml": 'model = "scripted/demo"\n\n[retry]\nmin_delay_ms = 200\n',
    "README.md": "A tiny project for the forge-lsp demo.\n",
}
DEMO_PROMPT = "Change the server port in app.cfg to 9090."


def _indent(text: str, prefix: str = "      ") -> str:
    return textwrap.indent(text.rstrip(), prefix)


def format_event(event: Mapping[str, Any]) -> str | None:
    """One forge/event payload as readable lines (None for events shown elsewhere)."""
    kind = event.get("type")
    if kind == "turnStarted":
        return f"▶ turn {event['turnId']} started (model {event.get('model', '?')})\n  prompt: {event.get('prompt', '')}"
    if kind == "assistantText":
        return None
    if kind == "toolCallStarted":
        return f"  → {event.get('title') or event.get('tool')}"
    if kind == "toolCallFinished":
        if event.get("ok"):
            return f"  ✓ {event['tool']} ok"
        cause = str(event.get("output", "")).split("<cause>", 1)[-1].split("</cause>", 1)[0]
        return f"  ✗ {event['tool']} failed: {cause.strip().splitlines()[0] if cause.strip() else ''}"
    if kind == "retry":
        return f"  ↻ retry notice for {event['tool']} ({event['attemptsLeft']} of {event['limit']} attempts left), sent to the model:\n{_indent('<retry>' + event['notice'] + '</retry>')}"
    if kind == "llmRetry":
        return f"  ⟳ model request failed ({event['cause']}); retry {event['attempt']} in {event['delayMs']} ms"
    if kind == "interrupt":
        reason = event["reason"]
        return (
            f"  ⛔ interrupted: {reason['kind']} {{limit: {reason['limit']}"
            + (f", errors: {reason['errors']}}}" if "errors" in reason else "}")
            + f"\n     {event.get('message', '')}"
        )
    if kind == "turnFinished":
        s = event.get("summary", {})
        line = f"■ turn {event.get('status')}: {s.get('requests', 0)} requests, {s.get('toolCalls', 0)} tool calls, {s.get('failures', 0)} failures"
        if s.get("error"):
            line += f"\n  error: {s['error']}"
        return line
    return None


class EventPrinter:
    """Prints events to a stream; streamed assistant text is gathered into one line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._text: list[str] = []

    def __call__(self, event: Mapping[str, Any]) -> None:
        if event.get("type") == "assistantText":
            self._text.append(str(event.get("text", "")))
            return
        self.flush_text()
        line = format_event(event)
        if line is not None:
            print(line, file=self.out, flush=True)

    def flush_text(self) -> None:
        """Print gathered assistant text, if any."""
        if self._text:
            text = "".join(self._text).strip()
            self._text.clear()
            if text:
                print(f"  assistant: {text}", file=self.out, flush=True)


async def run_headless(prompt: str, workspace: Path, model: str | None, out: TextIO) -> int:
    """Run one turn in-process and print its events; returns the exit code."""
    from forge_lsp.llm.litellm_adapter import warm_up
    from forge_lsp.runtime import WorkspaceRuntime

    warm_up()
    runtime = WorkspaceRuntime(workspace)
    for problem in runtime.effective.problems:
        print(f"config: {problem}", file=sys.stderr)
    printer = EventPrinter(out)
    try:
        summary = await runtime.run(prompt, lambda e: printer(e.to_dict()), model)
    finally:
        runtime.close()
    printer.flush_text()
    if summary.text:
        print(f"\n{summary.text}", file=out)
    return EXIT_CODES[summary.status.value]


def make_demo_workspace(folder: Path | None = None) -> Path:
    """A temporary workspace with the files the builtin demo script expects."""
    root = folder or Path(tempfile.mkdtemp(prefix="forge-demo-"))
    for name, content in DEMO_FILES.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=level, handlers=[handler], format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(prog="forge-lsp", description="A Forge-style coding agent behind LSP.")
    parser.add_argument("--version", action="version", version=f"forge-lsp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (to stderr or --log-file)")
    parser.add_argument("--log-file", help="write logs to this file")
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", nargs=2, metavar=("HOST", "PORT"), help="serve LSP over TCP")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one agent turn headless and print its events")
    run.add_argument("prompt")
    run.add_argument("--workspace", "-w", default=".", help="workspace root (default: .)")
    run.add_argument("--model", "-m", help="model, e.g. openai/gpt-4o or scripted/demo")
    demo = sub.add_parser("demo", help="run the builtin demo turn in a temporary workspace")
    demo.add_argument("--workspace", "-w", help="use this folder instead of a temporary one")
    demo.add_argument("--in-process", action="store_true", help="run the turn without the language server")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the forge-lsp console script."""
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbose, args.log_file)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.command == "run":
        workspace = Path(args.workspace)
        if not workspace.is_dir():
            print(f"forge-lsp: workspace {workspace} is not a folder", file=sys.stderr)
            return 2
        return asyncio.run(run_headless(args.prompt, workspace, args.model, sys.stdout))
    if args.command == "demo":
        root = make_demo_workspace(Path(args.workspace) if args.workspace else None)
        print(f"forge-lsp demo: workspace {root}\n", flush=True)
        if args.in_process:
            code = asyncio.run(run_headless(DEMO_PROMPT, root, None, sys.stdout))
        else:
            from forge_lsp.lsp.demo import run_demo_through_server

            code = asyncio.run(run_demo_through_server(root, DEMO_PROMPT, sys.stdout))
        print(f"\ntranscripts: {root / '.forge' / 'transcripts'}")
        # The demo is meant to end in an interrupt: that is success for it.
        return 0 if code == EXIT_INTERRUPTED else 1
    from forge_lsp.lsp.server import create_server

    server = create_server()
    if args.tcp:
        host, port = args.tcp
        server.start_tcp(host, int(port))
    else:
        server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
