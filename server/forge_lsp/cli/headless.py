"""forge-lsp run: one agent turn in-process, its events printed; and the checks of what the user typed for it."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from forge_lsp.cli.exit_codes import EXIT_CODES, EXIT_FAILED, EXIT_USAGE
from forge_lsp.cli.parser import UsageError
from forge_lsp.core.errors import BadPrompt, EmptyPrompt, NoModel, TurnInProgress, UnknownAgent
from forge_lsp.core.errors import check_prompt as core_check_prompt
from forge_lsp.core.pipeline import ArgsWithoutCommand, PromptRequest, with_args
from forge_lsp.render import EventPrinter, say

if TYPE_CHECKING:
    from forge_lsp.config import ConfigProblem

log = logging.getLogger(__name__)

MAX_PRINTED_PROBLEMS = 50


async def run_headless(
    prompt: str,
    workspace: Path,
    model: str | None,
    out: TextIO,
    trusted: bool = False,
    conversation: str | None = None,
    new: bool = False,
    agent: str | None = None,
) -> int:
    """Run one turn in-process and print its events; returns the exit code.

    trusted: the user said so for this run (--trust); otherwise the trust store decides.
    conversation: continue this stored conversation (--conversation ID, or a unique start of the id) instead of
    the current one. new: start a new conversation (--new) instead. agent: the turn's agent (--agent).
    """
    from forge_lsp.cli.ask import terminal_ask
    from forge_lsp.cli.review import review_at_terminal
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.core.session import answer
    from forge_lsp.core.wording import TERMINAL
    from forge_lsp.domain.events import Event
    from forge_lsp.domain.questions import EditReviewAsked, PermissionAsked
    from forge_lsp.llm.litellm_adapter import warm_up

    check_prompt(prompt)
    warm_up()
    # a confirm rule asks the user at the terminal, when there is one (else the call fails: nobody can be asked)
    ask = terminal_ask()
    runtime = WorkspaceRuntime(
        workspace,
        trusted=True if trusted else None,
        wording=TERMINAL,
        on_notice=lambda message: say(sys.stderr, message),
    )
    try:
        # "/name args": the command's prompt. An unknown /name is a mistake in the command line: said alone,
        # before what the workspace's config says.
        accepted = runtime.accept(PromptRequest(prompt, model=model, agent=agent))
        if new:
            runtime.new_conversation()
        elif conversation is not None:
            runtime.open_conversation(find_conversation(runtime.list_conversations(), conversation, runtime.root, workspace))
    except UnknownAgent as exc:
        runtime.close()
        raise UsageError(f"--agent: {exc}") from None
    except BadPrompt as exc:
        runtime.close()
        raise UsageError(str(exc)) from None
    except BaseException:
        runtime.close()
        raise
    refused = runtime.client_trust_refused()
    if refused is not None:
        say(sys.stderr, f"forge-lsp: --trust: {refused}; this run is not trusted")
    ignored = runtime.untrusted_problems(model)
    say_problems(runtime.config_problems())  # the ignored ones are said in one line below
    if ignored:
        say(sys.stderr, untrusted_line(runtime.root, workspace, ignored, runtime.untrusted_since(), refused is None))
    printer = EventPrinter(out)

    def emit(event: Event) -> None:
        if isinstance(event, PermissionAsked):  # asked at the terminal, or nobody can answer (no terminal)
            answer(event, ask)
        elif isinstance(event, EditReviewAsked):  # edit_review = "confirm": the diff, asked at the terminal
            review_at_terminal(event, ask)
        else:
            printer(event.to_dict())

    try:
        summary = await runtime.prompt(accepted, emit)
    except TurnInProgress as exc:
        say(sys.stderr, f"forge-lsp: {exc}")
        return EXIT_FAILED
    except NoModel as exc:
        say(sys.stderr, f"forge-lsp: {exc}")  # it names --model already (the terminal's wording)
        return EXIT_USAGE
    except BadPrompt as exc:  # the runtime's own check of the prompt
        raise UsageError(str(exc)) from exc
    finally:
        runtime.close()
        await runtime.close_mcp()
    printer.flush_text()
    if summary.timing:  # for -v / --log-file, as the language server's log says it
        log.info(
            "turn %s %s; timing: %s",
            summary.turn_id,
            summary.status.value,
            ", ".join(f"{k} {v:.1f}" for k, v in summary.timing.items()),
        )
    # Every message of the turn was printed once, as it came ("assistant: ..."): the ■ line is the last.
    return EXIT_CODES[summary.status.value]


IGNORED_NAMED = 10
NOT_TRUSTED = "ignored because this workspace is not trusted: "


def untrusted_line(root: Path, workspace: Path, ignored: list[ConfigProblem], since: str, hint: bool = True) -> str:
    """One line for what an untrusted workspace had ignored (since: why it is not trusted, WorkspaceRuntime's
    untrusted_since): each setting where it is and why, and how to trust it (unless hint is False: it cannot be
    trusted as it is, and a line before says why)."""

    def named(p: ConfigProblem) -> str:
        where = p.path.relative_to(root).as_posix() if p.path and p.path.is_relative_to(root) else str(p.path or p.layer)
        where += f":{p.line} {p.key}" if p.key and p.line else f" {p.key}" if p.key else ""
        return f"{where} ({p.message.split(NOT_TRUSTED, 1)[-1]})"

    listed = "; ".join(named(p) for p in ignored[:IGNORED_NAMED])
    more = f"; and {len(ignored) - IGNORED_NAMED} more" if len(ignored) > IGNORED_NAMED else ""
    how = f" `forge-lsp trust {workspace}` trusts it, --trust trusts it for this run" if hint else ""
    return f"forge-lsp: {root} is not trusted{since}, so it cannot set: {listed}{more}.{how}"


MATCHES_LISTED = 10


def find_conversation(listed: list[dict[str, Any]], wanted: str, root: Path, workspace: Path) -> str:
    """The id of the listed conversation that wanted names: its whole id, or a start of it that no other shares.

    UsageError naming the matches (id and title) when several start so, or how to list them when none does.
    """
    ids = [str(c["id"]) for c in listed]
    if wanted in ids:
        return wanted
    matches = [c for c in listed if str(c["id"]).startswith(wanted)]
    if len(matches) == 1:
        return str(matches[0]["id"])
    if not matches:
        raise UsageError(f"no conversation {wanted!r} in {root}: `forge-lsp conversations -w {workspace}` lists them")
    shown = "; ".join(f"{c['id']} ({c['title'] or 'no turn yet'})" for c in matches[:MATCHES_LISTED])
    more = f"; and {len(matches) - MATCHES_LISTED} more" if len(matches) > MATCHES_LISTED else ""
    raise UsageError(f"{wanted!r} matches {len(matches)} conversations: {shown}{more}; give more of the id")


def command_line(prompt: str, words: Sequence[str]) -> str:
    """`forge-lsp run /name ARG...`: the command and its arguments as one prompt; UsageError for words after a
    prompt that is not a /command (a prompt of several words is quoted)."""
    try:
        return with_args(prompt, list(words))
    except ArgsWithoutCommand:
        raise UsageError(f'put the prompt in quotes: forge-lsp run "{prompt} {" ".join(words)}"') from None


def read_prompt(stdin: TextIO) -> str:
    """The prompt of `forge-lsp run -`: all of stdin (a person at a terminal ends it with Ctrl-D)."""
    if stdin.isatty():
        say(sys.stderr, "forge-lsp: reading the prompt from stdin; end it with Ctrl-D")
    try:
        return stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the prompt on stdin is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def check_prompt(prompt: str, where: str = "") -> None:
    """UsageError for a prompt no turn can run (before seconds go into loading litellm); where: ' on stdin'."""
    try:
        core_check_prompt(prompt)
    except EmptyPrompt:
        raise UsageError(
            f'the prompt{where} is empty: say what the agent should do, e.g. forge-lsp run "fix the failing test"'
        ) from None
    except BadPrompt as exc:
        raise UsageError(str(exc)) from None


def check_workspace(path: Path) -> Path:
    """The workspace folder, or a UsageError saying what is wrong with it."""
    if not path.exists():
        raise UsageError(f"workspace {path} does not exist")
    if not path.is_dir():
        raise UsageError(f"workspace {path} is not a folder")
    return path


def say_problems(problems: Sequence[ConfigProblem]) -> None:
    """The config's problems on stderr, one line each ("config: FILE:LINE: key: why"), at most MAX_PRINTED_PROBLEMS."""
    for problem in problems[:MAX_PRINTED_PROBLEMS]:
        say(sys.stderr, f"config: {problem}")
    if len(problems) > MAX_PRINTED_PROBLEMS:
        say(sys.stderr, f"config: ... and {len(problems) - MAX_PRINTED_PROBLEMS} more problems")
