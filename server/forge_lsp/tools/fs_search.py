"""fs_search: ripgrep over the workspace (rg from the ripgrep PyPI package)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from forge_lsp.tools.base import Implementation, ToolContext, ToolFailure, ToolOutput, boolean, integer, obj, string
from forge_lsp.tools.process import run_process

MODES = ("content", "files_with_matches", "count")


@cache
def rg_binary() -> str:
    """The rg executable: beside this Python (the ripgrep package's), else on PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise ToolFailure("ripgrep (rg) is not installed; pip install ripgrep")
    return found


def rg_args(args: Mapping[str, Any], target: str) -> list[str]:
    """The rg command line for one search."""
    mode = args.get("output_mode") or "files_with_matches"
    if mode not in MODES:
        raise ToolFailure(f"output_mode must be one of {', '.join(MODES)}, got {mode!r}")
    argv = [rg_binary(), "--no-config", "--color=never", "--no-heading", "--max-columns=500", "--max-columns-preview"]
    if mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif mode == "count":
        argv.append("--count")
    else:
        argv.append("--line-number")
        for flag, key in (("-A", "-A"), ("-B", "-B"), ("-C", "-C")):
            if args.get(key) is not None:
                argv += [flag, str(int(args[key]))]
    if args.get("case_insensitive") or args.get("-i"):
        argv.append("--ignore-case")
    if args.get("multiline"):
        argv += ["--multiline", "--multiline-dotall"]
    if args.get("glob"):
        argv += ["--glob", str(args["glob"])]
    if args.get("type"):
        argv += ["--type", str(args["type"])]
    argv += ["--regexp", str(args["pattern"])]
    if target != ".":  # rg prints paths as given: "./a.py" for ".", "a.py" for none
        argv += ["--", target]
    return argv


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Search file contents with a regular expression."""
    if not str(args["pattern"]):
        raise ToolFailure("pattern must not be empty")
    target = ctx.workspace.resolve(args.get("path") or ".")
    if not target.exists():
        raise await ctx.missing(target, "path")
    rel = ctx.workspace.relative(target)
    argv = rg_args(args, rel)
    done = await run_process(argv, ctx.workspace.root, ctx.env, ctx.config.tool_timeout_secs, watch=ctx.watch)
    if done.timed_out:
        raise ToolFailure(f"search timed out after {ctx.config.tool_timeout_secs} s")
    if done.exit_code == 1:
        return ToolOutput(f"No matches for {args['pattern']!r} in {rel}")
    if done.exit_code != 0:
        raise ToolFailure(f"ripgrep failed: {done.stderr.strip() or f'exit code {done.exit_code}'}")
    lines = done.stdout.splitlines()
    offset = int(args.get("offset") or 0)
    limit = min(int(args.get("head_limit") or ctx.config.max_search_lines), ctx.config.max_search_lines)
    page = lines[offset : offset + limit]
    note = ""
    if offset + limit < len(lines):
        note = f"\n({len(lines)} lines in all; showing {offset + 1}-{offset + len(page)}; use offset={offset + limit} for more)"
    return ToolOutput("\n".join(page) + note)


TOOL = Implementation(
    description="Search the workspace with ripgrep. Respects .gitignore. output_mode: files_with_matches (default), content, count.",
    parameters=obj(
        {
            "pattern": string("Regular expression (ripgrep syntax)."),
            "path": string("File or folder to search (default: the workspace root)."),
            "glob": string("Only files matching this glob, e.g. '*.py'."),
            "type": string("Only files of this ripgrep type, e.g. 'py'."),
            "output_mode": {"type": "string", "enum": list(MODES), "description": "What to return."},
            "case_insensitive": boolean("Ignore case."),
            "multiline": boolean("Let the pattern span lines."),
            "-A": integer("Lines of context after each match (content mode)."),
            "-B": integer("Lines of context before each match (content mode)."),
            "-C": integer("Lines of context around each match (content mode)."),
            "head_limit": integer("At most this many output lines."),
            "offset": integer("Skip this many output lines first."),
        },
        ["pattern"],
    ),
    run=run,
)
