"""shell: run a command in the workspace: deny/confirm rules, env checks, the bwrap sandbox."""

from __future__ import annotations

import asyncio
import fnmatch
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import ShellConfig
from forge_lsp.patterns import UnsafePattern
from forge_lsp.tools import sandbox
from forge_lsp.tools.base import Implementation, NobodyToAsk, ToolContext, ToolFailure, ToolOutput, obj, string
from forge_lsp.tools.cmdline import Analysis, Unanalysable, analyse, rule_matches
from forge_lsp.tools.process import run_process, shell_argv
from forge_lsp.tools.protect import Protection, disarm_new, restore

RUN_CHANGING_ENV = (
    "BASH_ENV",
    "ENV",
    "BASH_FUNC_*",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "ZDOTDIR",
    "HOME",
    "XDG_CONFIG_HOME",
    "PATH",
    "LD_*",
    "DYLD_*",
    "GCONV_PATH",
    "PYTHON*",
    "PERL5*",
    "PERLLIB",
    "RUBY*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NPM_CONFIG_*",
    "LUA_INIT*",
    "LUA_PATH*",
    "LUA_CPATH*",
    "TCLLIBPATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG*",
    "GIT_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
)
"""Environment names that change what a command runs (not just its data); refused in env unless allowed."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_env(extra: Mapping[str, Any], allow: tuple[str, ...]) -> dict[str, str]:
    """The tool's env argument, or ToolFailure naming what it refuses."""
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise ToolFailure("env must map names to string values")
    for name in extra:
        if any(fnmatch.fnmatchcase(name, a) for a in allow):
            continue
        if not _ENV_NAME.fullmatch(name):
            raise ToolFailure(f"env name {name!r} refused: not a plain variable name")
        rule = next((p for p in RUN_CHANGING_ENV if fnmatch.fnmatchcase(name.upper(), p)), None)
        if rule is not None:
            raise ToolFailure(
                f"env name {name} refused: it changes what the command runs ({rule}); set it inside the command if it is "
                "needed, or the user may allow it in the user config's [tools.shell] allow_env"
            )
    return dict(extra)


async def check_rules(command: str, settings: ShellConfig, ctx: ToolContext) -> None:
    """Apply [tools.shell] deny and confirm to what the command line runs; ToolFailure if it may not run."""
    if not settings.deny and not settings.confirm:
        return
    analysis: Analysis | None
    why = ""
    try:
        # Off the event loop: a long hostile line takes a moment to read.
        analysis = await asyncio.to_thread(analyse, command)
    except Unanalysable as exc:
        analysis, why = None, str(exc)
    broken = ""
    for pattern in settings.deny:
        try:
            matched = rule_matches(command, analysis, pattern)
        except UnsafePattern as exc:
            # A deny rule that cannot be tried must not let everything through: ask instead (fail closed).
            broken = broken or f"the deny pattern {pattern!r}{_set_at(ctx, 'deny', pattern)} cannot be used: {exc}"
            continue
        if matched:
            raise ToolFailure(
                f"command denied by [tools.shell] deny pattern {pattern!r}{_set_at(ctx, 'deny', pattern)}: {command}"
            )
    if analysis is None or broken:
        # What it runs is unknown, or a rule cannot be tried, so no rule can be said not to match: ask (fail closed).
        why = broken or why
        fix = "fix the rule" if broken else "write it as plain commands"
        question = (
            f"Allow the agent to run `{command}`? It cannot be checked against your [tools.shell] deny/confirm rules ({why})."
        )
        if not await _confirmed(ctx, question, f"it cannot be checked against [tools.shell] deny/confirm rules ({why})", command):
            raise ToolFailure(
                f"command refused: it cannot be checked against [tools.shell] deny/confirm rules ({why}) and the user "
                f"did not allow it; {fix}: {command}"
            )
        return
    for pattern in settings.confirm:
        try:
            matched, unusable = rule_matches(command, analysis, pattern), ""
        except UnsafePattern as exc:  # a confirm rule that cannot be tried asks, as if it matched
            matched, unusable = True, f" (which cannot be used: {exc})"
        if matched:
            question = f"Allow the agent to run `{command}`? (matches confirm pattern {pattern!r}{unusable})"
            why = f"it matches [tools.shell] confirm pattern {pattern!r}{_set_at(ctx, 'confirm', pattern)}{unusable}"
            if not await _confirmed(ctx, question, why, command):
                raise ToolFailure(f"the user denied running this command (confirm pattern {pattern!r}): {command}")
            return


async def _confirmed(ctx: ToolContext, question: str, why: str, command: str) -> bool:
    """The user's answer; a clear failure when nobody can be asked (not "the user denied")."""
    try:
        return await ctx.confirm("shell", question)
    except NobodyToAsk:
        raise ToolFailure(
            f"not run: {why}, so it needs the user's yes, and nobody can be asked here (forge-lsp run asks only in a "
            f"terminal; run it in one or from an editor, or change the rule): {command}"
        ) from None


def _set_at(ctx: ToolContext, rule: str, pattern: str) -> str:
    """ " (set at FILE:LINE)": where a [tools.shell] rule comes from, so the user knows where to change it."""
    where = ctx.config.rule_origins.get((f"tools.shell.{rule}", pattern))
    return f" (set at {where})" if where else ""


async def sandboxed(
    argv: list[str], cwd: Path, env: dict[str, str], ctx: ToolContext
) -> tuple[list[str], dict[str, str], Protection | None]:
    """argv and env as they run: under bwrap when [tools.shell] sandbox says so, or unset in an untrusted
    workspace; with the protection to restore and check when it ends (see tools.protect; None: not sandboxed)."""
    settings = ctx.config.shell
    mode = settings.sandbox
    if mode == "none" or (mode is None and ctx.config.trusted):
        return argv, env, None
    problem = await sandbox.unavailable()
    if problem is not None:
        if mode == "bwrap":
            raise ToolFailure(f'[tools.shell] sandbox = "bwrap", but {problem}: {sandbox.INSTALL_HINT}')
        message = f"shell commands of this untrusted workspace run without a sandbox: {problem}; {sandbox.INSTALL_HINT}"
        sandbox.warn_once(message, ctx.notice)
        return argv, env, None
    bwrap = sandbox.bwrap_path()
    assert bwrap is not None
    home = env.get("HOME")
    plan = await asyncio.to_thread(sandbox.protection, ctx.workspace.root, home)
    wrapped = sandbox.bwrap_argv(bwrap, ctx.workspace.root, cwd, argv, network=settings.network, home=home, protected=plan)
    return wrapped, sandbox.scrub_env(env, settings.allow_env), plan


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
    extra = check_env(args.get("env") or {}, settings.allow_env)
    await check_rules(command, settings, ctx)
    cwd = ctx.workspace.resolve(args.get("cwd") or ".")
    if not cwd.exists():
        raise await ctx.missing(cwd, "cwd")
    if not cwd.is_dir():
        raise ToolFailure(f"cwd {ctx.workspace.relative(cwd)} is not a directory")
    timeout = ctx.config.shell_timeout()
    plain = shell_argv(command)
    argv, env, plan = await sandboxed(plain, cwd, dict(ctx.env), ctx)
    guards = plan.guards if plan is not None else {}
    try:
        done = await run_process(argv, cwd, {**env, **extra}, timeout, watch=ctx.watch)
    finally:
        planted = await asyncio.to_thread(restore, guards) if guards else []
        disarmed = await asyncio.to_thread(disarm_new, ctx.workspace.root, plan) if plan is not None else []
    cfg = ctx.config
    out = truncate(done.stdout, cfg.max_stdout_prefix_lines, cfg.max_stdout_suffix_lines, cfg.max_stdout_line_chars)
    err = truncate(done.stderr, cfg.max_stdout_prefix_lines, cfg.max_stdout_suffix_lines, cfg.max_stdout_line_chars)
    body = f'<shell_output command="{command}" exit_code="{done.exit_code}">\n<stdout>{out}</stdout>\n<stderr>{err}</stderr>\n</shell_output>'
    if planted:
        wrote = ", ".join(ctx.workspace.relative(p) for p in planted if guards[p] is None)
        relinked = ", ".join(ctx.workspace.relative(p) for p in planted if guards[p] is not None)
        what = " and ".join(
            x for x in (wrote and f"wrote {wrote} (removed)", relinked and f"replaced the link {relinked} (put back)") if x
        )
        raise ToolFailure(
            f"the command {what}: git, your shell or forge-lsp would run what it names later, outside the sandbox\n{body}"
        )
    if disarmed:
        raise ToolFailure(
            f"the command made a git repository whose settings or hooks git would run later, outside the sandbox; "
            f"taken out: {', '.join(disarmed)}\n{body}"
        )
    if done.timed_out:
        raise ToolFailure(f"command timed out after {timeout} s and was killed\n{body}")
    if done.exit_code != 0 and settings.fail_on_nonzero_exit:
        raise ToolFailure(f"command exited with code {done.exit_code}\n{body}")
    return ToolOutput(body)


TOOL = Implementation(
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
    timeout=lambda config: config.shell_timeout() + 10,  # the shell's own timeout kills the command first
)
