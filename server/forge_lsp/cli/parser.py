"""The forge-lsp command line: its options and subcommands, and what a usage mistake is."""

from __future__ import annotations

import argparse
from typing import NoReturn

from forge_lsp import __version__


class UsageError(Exception):
    """A mistake in what the user typed: reported as one line, never as a traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 1 (not usage text and exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


WORKSPACE_HELP = "workspace root (default: the nearest folder up from here with a .forge.toml, else a .git, else .)"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = _Parser(prog="forge-lsp", description="A Forge-style coding agent behind LSP.")
    parser.add_argument("--version", action="version", version=f"forge-lsp {__version__}")
    parser.add_argument(
        "--print-editor-config",
        action="store_true",
        help="print the Neovim, VS Code and Zed settings that start this install (no virtual environment to activate)",
    )
    _logging_options(parser, default=True)
    # The same options after a subcommand (forge-lsp run "..." -v): given there, they win; not given, the ones before stay.
    common = _Parser(add_help=False)
    _logging_options(common, default=False)
    parser.add_argument("--stdio", action="store_true", help="serve LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", nargs=2, metavar=("HOST", "PORT"), help="serve LSP over TCP")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", parents=[common], help="run one agent turn headless and print its events")
    run.add_argument("prompt", help='what the agent should do; "-" reads it from stdin')
    run.add_argument("args", nargs="*", metavar="ARG", help="after a /command, its arguments: forge-lsp run /explain src/app.py")
    run.add_argument("--workspace", "-w", help=WORKSPACE_HELP)
    run.add_argument("--model", "-m", help="model, e.g. openai/gpt-4o or scripted/demo")
    run.add_argument("--agent", "-a", metavar="ID", help="run the turn with this agent: forge (default), muse, sage or your own")
    run.add_argument(
        "--trust", action="store_true", help="trust the workspace's .forge.toml and .forge/ for this run (not recorded)"
    )
    which = run.add_mutually_exclusive_group()
    which.add_argument(
        "--conversation",
        "-c",
        metavar="ID",
        help="continue this conversation: its id or a unique start of it (see forge-lsp conversations)",
    )
    which.add_argument("--new", "-n", action="store_true", help="start a new conversation (it becomes the current one)")
    conversations = sub.add_parser("conversations", parents=[common], help="list the workspace's conversations, the latest first")
    conversations.add_argument("--workspace", "-w", help=WORKSPACE_HELP)
    conversations.add_argument("--json", action="store_true", help="print them as JSON")
    undo = sub.add_parser(
        "undo", parents=[common], help="put back the files a turn changed (default: the last turn that changed files)"
    )
    undo.add_argument("--turn", "-t", metavar="ID", help="the turn to undo (its id: forge-lsp conversations --json lists them)")
    undo.add_argument("--workspace", "-w", help=WORKSPACE_HELP)
    trust = sub.add_parser(
        "trust", parents=[common], help="trust a workspace's .forge.toml and .forge/ (recorded in your state folder)"
    )
    trust.add_argument(
        "folder", nargs="?", help="the workspace folder (default: the one above the current folder with a .forge.toml or .git)"
    )
    trust.add_argument("--revoke", action="store_true", help="no longer trust it")
    trust.add_argument("--status", action="store_true", help="only say whether it is trusted")
    sub.add_parser(
        "acp", parents=[common], help="serve the Agent Client Protocol on stdin/stdout (Zed, JetBrains, CodeCompanion)"
    )
    mcp = sub.add_parser("mcp", parents=[common], help="the workspace's MCP servers and their tools")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    mcp_list = mcp_sub.add_parser(
        "list", parents=[common], help="start each configured MCP server, list its tools; exit 1 if one failed"
    )
    mcp_list.add_argument("--workspace", "-w", help=WORKSPACE_HELP)
    mcp_list.add_argument("--json", action="store_true", help="print them as JSON")
    mcp_list.add_argument("--trust", action="store_true", help="trust the workspace's .mcp.json for this listing (not recorded)")
    demo = sub.add_parser("demo", parents=[common], help="run the builtin demo turn in a temporary workspace")
    demo.add_argument("--workspace", "-w", help="use this folder instead of a temporary one")
    demo.add_argument("--in-process", action="store_true", help="run the turn without the language server")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace (and its transcript) afterwards")
    return parser


def _logging_options(parser: argparse.ArgumentParser, default: bool) -> None:
    """-v and --log-file; without defaults (a subcommand's copy), an option not given leaves the value set before."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0 if default else argparse.SUPPRESS,
        help="more logging (to stderr or --log-file)",
    )
    parser.add_argument("--log-file", default=None if default else argparse.SUPPRESS, help="write logs to this file")
