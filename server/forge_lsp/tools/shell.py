"""shell: run a command in the workspace, with deny and confirm patterns."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any

from forge_lsp.tools.base import ToolContext, ToolDefinition, ToolFailure, ToolOutput, obj, string
from forge_lsp.tools.process import run_process


def matches(command: str, pattern: str) -> bool:
    """A deny/confirm pattern: a glob over the whole command, or a regex when written /like this/."""
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        try:
            return re.search(pattern[1:-1], command) is not None
        except re.error:
            return False
    return fnmatch.fnmatchcase(command.strip(), pattern) or fnmatch.fnmatchcase(command.strip(), pattern + " *")


def truncate(text: str, head: int, tail: int, line_chars: int) -> str:
    """Keep the first head and last tail lines, each at most line_chars long."""
    lines = text.splitlines()
    clipped = [ln if len(ln) <= line_chars else ln[:line_chars] + f"... [{len(ln) - line_chars} chars cut]" for ln in lines]
    if len(clipped) <= head + tail:
        return "\n".join(clipped)
    cut = len(clipped) - head - tail
    return "\n".join([*clipped[:head], f"... [{cut} lines cut] ...", *clipped[len(clipped) - tail :]])


async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
    """Run a shell command with the workspace (or cwd inside it) as working directory."""
    command: str = args["command"]
    if not command.strip():
        raise ToolFailure("command must not be empty")
    settings = ctx.config.shell
    for pattern in settings.deny:
        if matches(command, pattern):
            raise ToolFailure(f"command denied by [tools.shell] deny pattern {pattern!r}: {command}")
    for pattern in settings.confirm:
        if matches(command, pattern):
            if not await ctx.confirm("shell", f"Allow the agent to run `{command}`? (matches confirm pattern {pattern!r})"):
                raise ToolFailure(f"the user denied running this command (confirm pattern {pattern!r}): {command}")
            break
    cwd = ctx.workspace.resolve(args.get("cwd") or ".")
    if not cwd.is_dir():
        raise ToolFailure(f"cwd {ctx.workspace.relative(cwd)} is not a directory")
    extra = args.get("env") or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise ToolFailure("env must map names to string values")
    timeout = ctx.config.shell_timeout()
    done = await run_process(command, cwd, {**ctx.env, **extra}, timeout, watch=ctx.watch)
    cfg = ctx.config
    out = truncate(done.stdout, cfg.max_stdout_prefix_lines, cfg.max_stdout_suffix_lines, cfg.max_stdout_line_chars)
    err = truncate(done.stderr, cfg.max_stdout_prefix_lines, cfg.max_stdout_suffix_lines, cfg.max_stdout_line_chars)
    body = f'<shell_output command="{command}" exit_code="{done.exit_code}">\n<stdout>{out}</stdout>\n<stderr>{err}</stderr>\n</shell_output>'
    if done.timed_out:
        raise ToolFailure(f"command timed out after {timeout} s and was killed\n{body}")
    if done.exit_code != 0 and settings.fail_on_nonzero_exit:
        raise ToolFailure(f"command exited with code {done.exit_code}\n{body}")
    return ToolOutput(body)


TOOL = ToolDefinition(
    name="shell",
    description="Run a shell command (bash) in the workspace and return its exit code, stdout and stderr.",
    parameters=obj(
        {
            "command": string("The command line to run."),
            "cwd": string("Working directory, inside the workspace (default: the root)."),
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables."},
            "description": string("A few words saying what the command does."),
        },
        ["command"],
    ),
    run=run,
)
