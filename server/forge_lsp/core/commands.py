"""Commands: reusable prompts run as ``/name args`` (Claude Code's .claude/commands, Forge's commands).

A command is a Markdown file with YAML front matter (name, description, agent?, model?) whose body is a
prompt template: ``{{args}}`` is what the user typed after the name, rendered through the template
engine's safe grammar, strictly (a variable other than args is an error naming it). They come from
``~/.config/forge-lsp/commands/*.md`` and, in a trusted workspace only, ``.forge/commands/*.md``; the
same name in a later place wins: workspace > user > built-in.

When a prompt is a command (the rule, also in docs/agents.md): its first word is ``/`` and a command
name (letters, digits, ``-``, ``_``; no other ``/`` nor ``.``), followed by whitespace or the end. So
"/review src" is a command, "/usr/bin is on PATH" and "/etc/hosts ..." are plain prompts, and an
unknown "/name ..." is an error listing the commands. A prompt that starts with "//name" is sent as
"/name ..." without running a command.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forge_lsp.config import ConfigProblem
from forge_lsp.core.errors import BadPrompt
from forge_lsp.frontmatter import definitions, parse, read_definition
from forge_lsp.template_grammar import TemplateError, check
from forge_lsp.trust import COMMANDS_DIR

if TYPE_CHECKING:
    from forge_lsp.templates import TemplateEngine

log = logging.getLogger(__name__)

WORKSPACE_DIR = COMMANDS_DIR
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_INVOCATION = re.compile(r"/(" + NAME.pattern + r")(?:\s+|$)")
_USES_ARGS = re.compile(r"\{\{[^}]*\bargs\b")
FIELDS = ("name", "description", "agent", "model")
BUILTIN, USER, WORKSPACE = "builtin", "user", "workspace"
"""A command's source (forge.listCommands), as forge.listAgents names an agent's."""


class UnknownCommand(BadPrompt):
    """A prompt "/name ..." where no command is called name; the message lists the commands."""


@dataclass(frozen=True)
class Command:
    """One command: its name (without the slash), what it is for, its prompt template and where it came from."""

    name: str
    description: str
    body: str
    source: str = BUILTIN
    """"builtin", "user" or "workspace"."""
    path: Path | None = None
    agent: str | None = None
    model: str | None = None

    @property
    def takes_args(self) -> bool:
        """Whether its prompt uses {{args}} (a picker asks for them only then)."""
        return _USES_ARGS.search(self.body) is not None

    @property
    def origin(self) -> str:
        """Where it came from, for messages: its file, or "built-in"."""
        return str(self.path) if self.path is not None else "built-in"

    def to_dict(self) -> dict[str, Any]:
        """forge.listCommands' entry: {name, description, source, takesArgs, agent?, model?, path?}."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "takesArgs": self.takes_args,
        }
        if self.agent:
            out["agent"] = self.agent
        if self.model:
            out["model"] = self.model
        if self.path is not None:
            out["path"] = str(self.path)
        return out


@dataclass(frozen=True)
class Expansion:
    """What a prompt runs: the prompt the model is sent, and the command's agent and model (None: not set)."""

    prompt: str
    command: Command | None = None
    agent: str | None = None
    model: str | None = None


BUILTINS = (
    Command(
        "review",
        "Review the working tree's changes (git diff) for bugs, risks and missing tests",
        "Review the changes in this working tree. Run `git status` and `git diff HEAD` with the shell tool, read "
        "the code around each change as needed, and report what is wrong or risky: bugs, edge cases, missing "
        "tests, unclear names. Most important first, each with its file and line. Do not change any file."
        "{{#if args}}\n\nFocus on: {{args}}{{/if}}",
    ),
    Command(
        "test",
        "Run the project's tests and fix what fails",
        "Run this project's tests (find out how from its README, Makefile, pyproject.toml, package.json or CI "
        "config). If any fail, find the cause, fix the code (the test only when the test itself is wrong) and run "
        "them again, until they pass. Then say what you changed and why.{{#if args}}\n\nWhich tests: {{args}}{{/if}}",
    ),
    Command(
        "explain",
        "Explain code: what it does and how it fits in the project",
        "Explain {{#if args}}{{args}}{{else}}the code the user is looking at{{/if}}: what it does, how it fits in "
        "this project, and anything surprising in it. Read the files you need; do not change any file.",
    ),
)


def user_dir() -> Path:
    """~/.config/forge-lsp/commands (honouring XDG_CONFIG_HOME)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "forge-lsp" / "commands"


def split_invocation(prompt: str) -> tuple[str, str] | None:
    """(name, args) when the prompt is a command ("/name args"), else None (see the module's rule)."""
    match = _INVOCATION.match(prompt)
    if match is None:
        return None
    return match.group(1), prompt[match.end() :].strip()


class Commands:
    """The commands in force for one workspace, and the problems of their files."""

    def __init__(self, commands: Iterable[Command] = (), problems: Iterable[ConfigProblem] = ()) -> None:
        self.by_name: dict[str, Command] = {}
        for command in commands:  # later wins: built-in, then user, then workspace
            self.by_name[command.name] = command
        self.problems = list(problems)
        self.untrusted: dict[str, Path] = {}
        """The untrusted workspace's command names (not loaded) and their files, so that running one says why."""

    @classmethod
    def load(
        cls, root: Path | None, *, trusted: bool, user: Path | None = None, agents: Collection[str] | None = None
    ) -> Commands:
        """Built-ins, the user's folder and (trusted only) the workspace's .forge/commands.

        agents: the agent ids in force; a command naming another is not loaded (None: not checked)."""
        problems: list[ConfigProblem] = []
        found = list(BUILTINS)
        found += _load_dir(user if user is not None else user_dir(), USER, None, problems, agents)
        if root is not None and trusted:
            found += _load_dir(root / WORKSPACE_DIR, WORKSPACE, root.resolve(), problems, agents)
        loaded = cls(found, problems)
        if root is not None and not trusted:
            loaded.untrusted = _names(root / WORKSPACE_DIR)
        return loaded

    def list(self) -> list[Command]:
        """Every command in force, by name."""
        return [self.by_name[name] for name in sorted(self.by_name)]

    def names(self) -> str:
        """The commands' names, "/a, /b, /c", for messages."""
        return ", ".join(f"/{name}" for name in sorted(self.by_name))

    def expand(self, prompt: str, templates: TemplateEngine, changed: bool = False) -> Expansion:
        """What prompt runs: a command's rendered body, or the prompt itself.

        UnknownCommand for "/name" that names no command (changed: the workspace was trusted and its files changed
        since, which the message of an ignored workspace command says); BadPrompt when the body does not render
        (a missing variable: the message names it and the file)."""
        if prompt.startswith("//") and split_invocation(prompt[1:]) is not None:
            return Expansion(prompt[1:])
        found = split_invocation(prompt)
        if found is None:
            return Expansion(prompt)
        name, args = found
        command = self.by_name.get(name)
        if command is None and name in self.untrusted:
            raise UnknownCommand(
                f"/{name} is this workspace's command ({WORKSPACE_DIR.as_posix()}/{self.untrusted[name].name}), "
                + (
                    "ignored because the workspace's files changed since you trusted it; trust it again to run it"
                    if changed
                    else "ignored because the workspace is not trusted; trust it to run it"
                )
            )
        if command is None:
            raise UnknownCommand(
                f"unknown command /{name}; the commands are {self.names()} (to send a prompt that starts with "
                f"/{name}, write //{name})"
            )
        try:
            text = templates.render_text(f"/{command.name}", command.body, command.origin, {"args": args})
        except TemplateError as exc:
            raise BadPrompt(f"command {str(exc).removeprefix('template ')}") from None
        if not text.strip():
            raise BadPrompt(f"command /{command.name} ({command.origin}) renders to an empty prompt")
        return Expansion(text, command, command.agent, command.model)


def _problem(source: str, path: Path, message: str, line: int = 1, key: str = "") -> ConfigProblem:
    return ConfigProblem(source, key, message, path, line)


def _names(folder: Path) -> dict[str, Path]:
    """The untrusted workspace's command files by name: the file's name only (nothing of an untrusted file is
    read or parsed: it may be large, or YAML made to be slow)."""
    return {path.name[: -len(".md")]: path for path in definitions(folder)}


def _load_dir(
    folder: Path, source: str, root: Path | None, problems: list[ConfigProblem], agents: Collection[str] | None
) -> list[Command]:
    """The commands of one folder; each bad file (or field) is a problem at its line, the others still load."""
    out: dict[str, Command] = {}
    for path in definitions(folder):
        command = _load_file(path, source, root, problems, agents)
        if command is None:
            continue
        if command.name in out:
            first = out[command.name].path
            problems.append(_problem(source, path, f"a second command /{command.name} (the first is {first}); not used"))
            continue
        out[command.name] = command
    return list(out.values())


def _load_file(
    path: Path, source: str, root: Path | None, problems: list[ConfigProblem], agents: Collection[str] | None
) -> Command | None:
    try:
        front = parse(read_definition(path, root))
    except (OSError, ValueError) as exc:  # FrontMatterError is a ValueError with its line
        problems.append(_problem(source, path, f"command not loaded: {exc}", getattr(exc, "line", 1)))
        return None
    fields: dict[str, str] = {}
    for key, value in front.fields.items():
        line = front.lines.get(key, 1)
        if key not in FIELDS:
            problems.append(_problem(source, path, f"unknown field (a command has {', '.join(FIELDS)})", line, key))
        elif not isinstance(value, str) or not value.strip():
            problems.append(_problem(source, path, "must be a non-empty string", line, key))
        else:
            fields[key] = value.strip()
    name = fields.get("name", path.name[: -len(".md")])
    if not NAME.fullmatch(name):
        line = front.lines.get("name", 1)
        problems.append(
            _problem(
                source,
                path,
                f"command not loaded: {name[:64]!r} is not a command name (letters, digits, - and _, at most 64)",
                line,
                "name" if "name" in fields else "",
            )
        )
        return None
    agent = fields.get("agent")
    if agent is not None and agents is not None and agent not in agents:
        known = ", ".join(agents)
        message = f"command not loaded: there is no agent {agent[:64]!r} (the agents are {known})"
        problems.append(_problem(source, path, message, front.lines.get("agent", 1), "agent"))
        return None
    body = front.body.strip("\n")
    if not body.strip():
        problems.append(_problem(source, path, "command not loaded: its prompt (the text after the front matter) is empty"))
        return None
    try:
        # Padded so that the grammar's line numbers are the file's.
        check("\n" * (front.body_line - 1) + front.body)
    except TemplateError as exc:
        match = re.match(r"line (\d+): (.*)", str(exc), re.S)
        line, message = (int(match.group(1)), match.group(2)) if match else (front.body_line, str(exc))
        problems.append(_problem(source, path, f"command not loaded: {message}", line))
        return None
    description = fields.get("description") or body.strip().splitlines()[0][:80]
    return Command(name, description, body, source, path, agent, fields.get("model"))
