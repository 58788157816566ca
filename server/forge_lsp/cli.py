"""forge-lsp: the language server (stdio or TCP), a headless `run`, and the `demo`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO, cast

from forge_lsp import __version__
from forge_lsp.render import EventPrinter, say

if TYPE_CHECKING:
    from forge_lsp.lsp.protocol import ForgeProtocol

EXIT_COMPLETED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_CANCELLED = 0, 1, 3, 130
MAX_PRINTED_PROBLEMS = 50
EXIT_CODES = {"completed": EXIT_COMPLETED, "interrupted": EXIT_INTERRUPTED, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}
EXIT_USAGE = EXIT_FAILED
"""Bad input to the command line (an empty prompt, a missing folder, an unknown option): one line on stderr."""

log = logging.getLogger(__name__)


class UsageError(Exception):
    """A mistake in what the user typed: reported as one line, never as a traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 1 (not usage text and exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


DEMO_FILES = {
    "app.cfg": "[server]\nhost: localhost\nport: 8080\n",
    ".forge.toml": 'model = "scripted/demo"\n\n[retry]\nmin_delay_ms = 200\n',
    "README.md": "A tiny project for the forge-lsp demo.\n",
}
DEMO_PROMPT = "Change the server port in app.cfg to 9090."


async def run_headless(
    prompt: str, workspace: Path, model: str | None, out: TextIO, trusted: bool = False, conversation: str | None = None
) -> int:
    """Run one turn in-process and print its events; returns the exit code.

    trusted: the user said so for this run (--trust); otherwise the trust store decides.
    conversation: continue this stored conversation (--conversation ID) instead of the current one.
    """
    from forge_lsp.llm.litellm_adapter import warm_up
    from forge_lsp.runtime import NoModel, TurnInProgress, WorkspaceRuntime

    check_prompt(prompt)
    warm_up()
    runtime = WorkspaceRuntime(workspace, trusted=True if trusted else None)
    runtime.on_notice = lambda message: say(sys.stderr, message)
    from forge_lsp.config import UNTRUSTED

    ignored = runtime.untrusted_problems()
    problems = [p for p in runtime.effective.problems if p.code != UNTRUSTED] + ignored
    for problem in problems[:MAX_PRINTED_PROBLEMS]:
        say(sys.stderr, f"config: {problem}")
    if len(problems) > MAX_PRINTED_PROBLEMS:
        say(sys.stderr, f"config: ... and {len(problems) - MAX_PRINTED_PROBLEMS} more problems")
    if ignored:
        changed = " (it changed since you trusted it)" if runtime.trust_state() == "changed" else ""
        say(
            sys.stderr,
            f"forge-lsp: {runtime.root} is not trusted{changed}: the settings above are ignored; "
            f"`forge-lsp trust {workspace}` trusts it, --trust trusts it for this run",
        )
    if conversation is not None:
        try:
            runtime.open_conversation(conversation)
        except KeyError:
            runtime.close()
            raise UsageError(
                f"no conversation {conversation!r} in {runtime.root}: `forge-lsp conversations -w {workspace}` lists them"
            ) from None
    printer = EventPrinter(out)
    try:
        summary = await runtime.run(prompt, lambda e: printer(e.to_dict()), model)
    except TurnInProgress as exc:
        say(sys.stderr, f"forge-lsp: {exc}")
        return EXIT_FAILED
    except NoModel as exc:
        say(sys.stderr, f"forge-lsp: {exc}, or pass --model")
        return EXIT_USAGE
    except ValueError as exc:  # the runtime's own check of the prompt
        raise UsageError(str(exc)) from exc
    finally:
        runtime.close()
    printer.flush_text()
    # The answer once more at the end, unless it is what was just printed (a one-reply turn).
    if summary.text and summary.text.strip() != printer.last_text:
        say(out, f"\n{summary.text}")
    return EXIT_CODES[summary.status.value]


def trust_command(folder: Path, revoke: bool, status: bool, out: TextIO) -> int:
    """forge-lsp trust DIR [--revoke | --status]: the user's decision, in the user's state folder."""
    from forge_lsp.trust import CHANGED, TRUSTED, TrustStore, trust_files

    store = TrustStore()
    root = folder.resolve()
    if status:
        state = store.state(root)
        words = {TRUSTED: "trusted", CHANGED: "not trusted (its files changed since you trusted it)"}
        say(out, f"{root}: {words.get(state, 'not trusted')}")
        return 0 if state == TRUSTED else 1
    if revoke:
        known = store.revoke(root)
        say(out, f"{root}: no longer trusted" if known else f"{root}: was not trusted")
        return 0
    store.trust(root)
    present = [p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p) for p in trust_files(root) if p.exists()]
    covered = ", ".join(present) if present else "no .forge.toml or .forge/templates yet"
    say(out, f"{root}: trusted ({covered}); a change to these files asks again. Recorded in {store.path}")
    return 0


def conversations_command(workspace: Path, as_json: bool, out: TextIO) -> int:
    """forge-lsp conversations: the workspace's stored conversations, the latest first."""
    import json

    from forge_lsp.runtime import WorkspaceRuntime
    from forge_lsp.state.dirs import stored_state_file

    if stored_state_file(workspace) is None:  # nothing stored, in .forge/ or the fallback: listing creates no .forge/
        say(out, "[]" if as_json else f"no conversations in {workspace.resolve()} yet")
        return 0
    runtime = WorkspaceRuntime(workspace)
    runtime.on_notice = lambda message: say(sys.stderr, message)
    try:
        listed = runtime.list_conversations()
        current = runtime.store.current_conversation() if listed else None
    finally:
        runtime.close()
    if as_json:
        say(out, json.dumps(listed, indent=2))
        return 0
    if not listed:
        say(out, f"no conversations in {runtime.root} yet")
        return 0
    for c in listed:
        mark = "*" if c["id"] == current else " "
        status = c["lastStatus"] or "-"
        title = c["title"] or "(no turn yet)"
        say(out, f"{mark} {c['id']}  {c['updated']}  {c['turns']:>3} turns  {status:<11} {c['tokens']:>8} tokens  {title}")
    say(out, '(* the current one; `forge-lsp run --conversation ID "PROMPT"` continues another)')
    return 0


def check_prompt(prompt: str) -> None:
    """UsageError for a prompt no turn can run (before seconds go into loading litellm)."""
    if not prompt.strip():
        raise UsageError('the prompt is empty: say what the agent should do, e.g. forge-lsp run "fix the failing test"')


def check_workspace(path: Path) -> Path:
    """The workspace folder, or a UsageError saying what is wrong with it."""
    if not path.exists():
        raise UsageError(f"workspace {path} does not exist")
    if not path.is_dir():
        raise UsageError(f"workspace {path} is not a folder")
    return path


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


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=level, handlers=[handler], format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = _Parser(prog="forge-lsp", description="A Forge-style coding agent behind LSP.")
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
    run.add_argument(
        "--trust", action="store_true", help="trust the workspace's .forge.toml and .forge/ for this run (not recorded)"
    )
    run.add_argument("--conversation", "-c", metavar="ID", help="continue this conversation (see forge-lsp conversations)")
    conversations = sub.add_parser("conversations", help="list the workspace's conversations, the latest first")
    conversations.add_argument("--workspace", "-w", default=".", help="workspace root (default: .)")
    conversations.add_argument("--json", action="store_true", help="print them as JSON")
    trust = sub.add_parser("trust", help="trust a workspace's .forge.toml and .forge/ (recorded in your state folder)")
    trust.add_argument("folder", nargs="?", default=".", help="the workspace folder (default: .)")
    trust.add_argument("--revoke", action="store_true", help="no longer trust it")
    trust.add_argument("--status", action="store_true", help="only say whether it is trusted")
    sub.add_parser("acp", help="serve the Agent Client Protocol on stdin/stdout (Zed, JetBrains, CodeCompanion)")
    demo = sub.add_parser("demo", help="run the builtin demo turn in a temporary workspace")
    demo.add_argument("--workspace", "-w", help="use this folder instead of a temporary one")
    demo.add_argument("--in-process", action="store_true", help="run the turn without the language server")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace (and its transcript) afterwards")
    return parser


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
    if args.command == "run":
        check_prompt(args.prompt)
        if args.model is not None and not args.model.strip():
            raise UsageError("--model is empty: name a model, e.g. --model openai/gpt-4o or --model scripted/echo")
        workspace = check_workspace(Path(args.workspace))
        if args.conversation is not None and not args.conversation.strip():
            raise UsageError("--conversation is empty: give an id from `forge-lsp conversations`")
        return asyncio.run(
            run_headless(args.prompt, workspace, args.model, sys.stdout, trusted=args.trust, conversation=args.conversation)
        )
    if args.command == "conversations":
        return conversations_command(check_workspace(Path(args.workspace)), args.json, sys.stdout)
    if args.command == "trust":
        return trust_command(check_workspace(Path(args.folder)), args.revoke, args.status, sys.stdout)
    if args.command == "acp":
        from forge_lsp.acp.agent import serve

        return asyncio.run(serve())
    if args.command == "demo":
        folder = Path(args.workspace) if args.workspace else None
        if folder is not None and folder.exists() and not folder.is_dir():
            raise UsageError(f"demo workspace {folder} is not a folder")
        return run_demo(folder, args.in_process, args.keep, sys.stdout)
    tcp = _tcp_address(*args.tcp) if args.tcp else None
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
        server.start_io(sys.stdin.buffer, channel)  # type: ignore[arg-type]
    # exit after shutdown is 0, exit without it 1 (LSP spec); the client going away without exit is 0.
    return protocol.exit_code or 0


if __name__ == "__main__":
    sys.exit(main())
