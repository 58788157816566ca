"""forge-lsp: the command line read and dispatched (run, conversations, undo, trust, acp, demo), or the language server on stdio or TCP."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from forge_lsp.cli.ask import is_terminal
from forge_lsp.cli.exit_codes import EXIT_CANCELLED, EXIT_FAILED, EXIT_USAGE
from forge_lsp.cli.parser import UsageError, build_parser

if TYPE_CHECKING:
    from forge_lsp.lsp.protocol import ForgeProtocol

# The language server (the command an editor starts) imports what a subcommand needs only when it runs one:
# initialize must answer as fast as a bare pygls server (bench: cold start to initialize result).

log = logging.getLogger(__name__)


def say(out: TextIO, text: str) -> None:
    """render.say (every line the CLI prints for a person, redacted), loaded when there is something to say."""
    from forge_lsp.render import say as render_say

    render_say(out, text)


class _AnsweredCancels(logging.Filter):
    """pygls warns of every $/cancelRequest for a request it has answered already, which VS Code sends for most
    code action and diagnostic requests it stopped needing (a dozen at a time in the Forge output): routine, as
    LSP lets a server ignore such a cancel. Logged at DEBUG (-vv) instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and record.getMessage().startswith("Cancel notification for unknown message id"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    from forge_lsp.redact import RedactingFormatter

    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_AnsweredCancels())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the forge-lsp console script: user mistakes are one line on stderr, never a traceback."""
    code = _guarded_main(argv)
    _exit_now_if_still_loading(code)
    return code


def _exit_now_if_still_loading(code: int) -> None:
    """A run that ends while litellm still loads in its daemon thread (a refused turn, a bad prompt) exits at once.

    Finalizing the interpreter under an import in flight can abort the process
    (SIGABRT, exit -6) instead of exiting with the code it chose.
    """
    adapter = sys.modules.get("forge_lsp.llm.litellm_adapter")
    thread = getattr(adapter, "_warming", None)
    if isinstance(thread, threading.Thread) and thread.is_alive():
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        logging.shutdown()
        os._exit(code)


def _guarded_main(argv: Sequence[str] | None) -> int:
    try:
        return _main(argv)
    except UsageError as exc:
        say(sys.stderr, f"forge-lsp: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        say(sys.stderr, "forge-lsp: cancelled")
        return EXIT_CANCELLED
    except BrokenPipeError:
        # The reader went away (`forge-lsp run ... | head`): nothing to report, and nothing more to write.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as exc:  # a folder that cannot be written, a port in use, a log file in a missing folder
        log.info("forge-lsp failed", exc_info=True)
        say(sys.stderr, f"forge-lsp: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}")
        return EXIT_FAILED
    except Exception as exc:  # a bug or a damaged state file: still one line; -v shows the traceback
        log.info("forge-lsp failed", exc_info=True)
        say(sys.stderr, f"forge-lsp: {type(exc).__name__}: {exc} (run with -v for the traceback)")
        return EXIT_FAILED


SERVING_ON_A_TERMINAL = (
    "forge-lsp: this is the language server, speaking LSP on stdin/stdout for an editor to start; "
    "it is waiting for one (Ctrl-C or Ctrl-D ends it). To try the agent: `forge-lsp demo`; "
    'to run a turn in this folder: `forge-lsp run "PROMPT"`; what to put in your editor\'s settings: '
    "`forge-lsp --print-editor-config`; all commands: `forge-lsp --help`"
)

ACP_ON_A_TERMINAL = (
    "forge-lsp acp: this is the agent for Agent Client Protocol clients (Zed, JetBrains, CodeCompanion), "
    "speaking JSON-RPC on stdin/stdout for a client to start; it is waiting for one (Ctrl-C or Ctrl-D ends it). "
    'To try the agent: `forge-lsp demo`; to run a turn in this folder: `forge-lsp run "PROMPT"`; '
    "what to put in a client's settings: `forge-lsp --print-editor-config`"
)


def _stop_at_once(signum: int, frame: object) -> None:
    """Ctrl-C on a server typed in a terminal: no client to finish with, and the reader thread blocks in the
    terminal's read (a KeyboardInterrupt left to the server could wait on it for ever)."""
    say(sys.stderr, "forge-lsp: stopped")
    os._exit(EXIT_CANCELLED)


def _tcp_address(host: str, port: str) -> tuple[str, int]:
    try:
        number = int(port)
    except ValueError:
        raise UsageError(f"--tcp port must be a number, not {port!r}") from None
    if not 0 <= number <= 65535:
        raise UsageError(f"--tcp port must be between 0 and 65535, not {number}")
    return host, number


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbose, args.log_file)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.print_editor_config:
        if args.command is not None or args.tcp or args.stdio:
            raise UsageError("--print-editor-config prints the settings and exits: give it alone")
        from forge_lsp.cli.editor_config import print_editor_config

        return print_editor_config(sys.stdout)
    if args.command is None:
        return _serve(args)
    return _subcommand(args)


def _subcommand(args: argparse.Namespace) -> int:
    from forge_lsp.cli.commands import conversations_command, trust_command, undo_command
    from forge_lsp.cli.headless import check_prompt, command_line, read_prompt, run_headless
    from forge_lsp.cli.root import workspace_of

    if args.command == "run":
        if args.args:
            args.prompt = command_line(args.prompt, args.args)
        if args.prompt == "-":
            args.prompt = read_prompt(sys.stdin)
            check_prompt(args.prompt, " on stdin")
        check_prompt(args.prompt)
        if args.model is not None and not args.model.strip():
            raise UsageError("--model is empty: name a model, e.g. --model openai/gpt-4o or --model scripted/echo")
        workspace = workspace_of(args.workspace, "-w .")
        if args.conversation is not None and not args.conversation.strip():
            raise UsageError("--conversation is empty: give an id from `forge-lsp conversations`")
        return asyncio.run(
            run_headless(
                args.prompt,
                workspace,
                args.model,
                sys.stdout,
                trusted=args.trust,
                conversation=args.conversation,
                new=args.new,
                agent=args.agent,
            )
        )
    if args.command == "conversations":
        return conversations_command(workspace_of(args.workspace, "-w ."), args.json, sys.stdout)
    if args.command == "undo":
        if args.turn is not None and not args.turn.strip():
            raise UsageError("--turn is empty: give a turn id (forge-lsp conversations --json lists each turn's files)")
        return undo_command(workspace_of(args.workspace, "-w ."), args.turn, sys.stdout)
    if args.command == "trust":
        return trust_command(workspace_of(args.folder, "`forge-lsp trust .`"), args.revoke, args.status, sys.stdout)
    if args.command == "mcp":
        from forge_lsp.cli.mcp import mcp_list

        return asyncio.run(mcp_list(workspace_of(args.workspace, "-w ."), args.json, args.trust, sys.stdout))
    if args.command == "acp":
        from forge_lsp.acp.agent import serve

        if is_terminal(sys.stdin):  # a person typed `forge-lsp acp`: a client never starts it on a terminal
            say(sys.stderr, ACP_ON_A_TERMINAL)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _stop_at_once)
        return asyncio.run(serve())
    if args.command == "demo":
        folder = Path(args.workspace) if args.workspace else None
        # here, not above: the demo's LSP client (pygls) loads for the demo only
        from forge_lsp.cli.demo import check_demo_folder, run_demo

        if folder is not None:
            check_demo_folder(folder)
        return run_demo(folder, args.in_process, args.keep, sys.stdout)
    raise UsageError(f"unknown command {args.command}")


def _serve(args: argparse.Namespace) -> int:
    """The language server, on stdio (the default) or TCP."""
    tcp = _tcp_address(*args.tcp) if args.tcp else None
    from forge_lsp.code_cache import attrs_compiled_once

    with attrs_compiled_once():  # lsprotocol's ~570 attrs classes: their generated code compiled once per user
        from forge_lsp.lsp.server import create_server

    server = create_server()
    protocol = cast("ForgeProtocol", server.protocol)
    if tcp:
        server.start_tcp(*tcp)
    else:
        # stdout is the LSP channel: the server writes to the real one, and anything else that
        # prints (a library's stray print) goes to stderr instead of corrupting the protocol.
        from forge_lsp.lsp.transport import CoalescingWriter

        channel = CoalescingWriter(sys.stdout.buffer)
        sys.stdout = sys.stderr
        if is_terminal(sys.stdin):  # a person typed a bare `forge-lsp`: an editor never starts it on a terminal
            say(sys.stderr, SERVING_ON_A_TERMINAL)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _stop_at_once)
        server.start_io(sys.stdin.buffer, channel)  # type: ignore[arg-type]
    # exit after shutdown is 0, exit without it 1 (LSP spec); the client going away without exit is 0.
    return protocol.exit_code or 0
