"""forge-lsp: the language server (stdio or TCP), a headless `run`, and the `demo`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from forge_lsp import __version__
from forge_lsp.render import EventPrinter

EXIT_COMPLETED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_CANCELLED = 0, 1, 3, 130
EXIT_USAGE = 2
MAX_PRINTED_PROBLEMS = 50
EXIT_CODES = {"completed": EXIT_COMPLETED, "interrupted": EXIT_INTERRUPTED, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}

DEMO_FILES = {
    "app.cfg": "[server]\nhost: localhost\nport: 8080\n",
    ".forge.toml": 'model = "scripted/demo"\n\n[retry]\nmin_delay_ms = 200\n',
    "README.md": "A tiny project for the forge-lsp demo.\n",
}
DEMO_PROMPT = "Change the server port in app.cfg to 9090."


async def run_headless(prompt: str, workspace: Path, model: str | None, out: TextIO) -> int:
    """Run one turn in-process and print its events; returns the exit code."""
    from forge_lsp.llm.litellm_adapter import warm_up
    from forge_lsp.runtime import NoModel, TurnInProgress, WorkspaceRuntime

    warm_up()
    runtime = WorkspaceRuntime(workspace)
    runtime.on_notice = lambda message: print(message, file=sys.stderr)
    problems = runtime.effective.problems
    for problem in problems[:MAX_PRINTED_PROBLEMS]:
        print(f"config: {problem}", file=sys.stderr)
    if len(problems) > MAX_PRINTED_PROBLEMS:
        print(f"config: ... and {len(problems) - MAX_PRINTED_PROBLEMS} more problems", file=sys.stderr)
    printer = EventPrinter(out)
    try:
        summary = await runtime.run(prompt, lambda e: printer(e.to_dict()), model)
    except TurnInProgress as exc:
        print(f"forge-lsp: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except NoModel as exc:
        print(f"forge-lsp: {exc}, or pass --model", file=sys.stderr)
        return EXIT_USAGE
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
        # stdout is the LSP channel: the server writes to the real one, and anything else that
        # prints (a library's stray print) goes to stderr instead of corrupting the protocol.
        from forge_lsp.lsp.transport import CoalescingWriter

        channel = CoalescingWriter(sys.stdout.buffer)
        sys.stdout = sys.stderr
        server.start_io(sys.stdin.buffer, channel)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
