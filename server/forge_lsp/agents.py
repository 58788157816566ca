"""Loading agents: the built-in ones, then ~/.config/forge-lsp/agents/*.md, then a trusted workspace's .forge/agents/*.md.

Each file is Markdown with YAML front matter (Forge's field names); its body is the system prompt,
a template of the safe grammar. A file with a problem is reported at its line (a ConfigProblem,
so every frontend shows it as it shows the config's) and the other agents still load.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_lsp.config import UNTRUSTED, ConfigProblem
from forge_lsp.domain.agents import USER, WORKSPACE, Agent, AgentSet
from forge_lsp.frontmatter import FrontMatterError, definitions, parse, read_definition
from forge_lsp.template_grammar import TemplateError, check
from forge_lsp.trust import AGENTS_DIR

AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
REASONING_EFFORTS = ("low", "medium", "high")
UNUSED_FIELDS = frozenset(
    {"tool_supported", "custom_rules", "subscribe", "user_prompt", "system_prompt", "top_p", "top_k", "max_tokens"}
)
"""Forge fields forge-lsp does not use: reported as ignored, never an error (a Forge agent file loads as it is)."""


def user_agents_dir(user_config: Path) -> Path:
    """~/.config/forge-lsp/agents (beside the user's config file)."""
    return user_config.parent / "agents"


def _kind(value: Any) -> str:
    """What a value is, for an error: its type, never the value itself (a workspace's front matter can make a
    value whose repr is gigabytes: nested YAML aliases)."""
    return {bool: "true/false", int: "a whole number", float: "a number", str: "text", list: "a list", dict: "fields"}.get(
        type(value), type(value).__name__
    )


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {_kind(value)}")
    return value


def _int(low: int) -> Callable[[Any], int]:
    def check_int(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {_kind(value)}")
        if value < low:
            raise ValueError(f"must be at least {low}, got {value}")
        return value

    return check_int


def _temperature(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {_kind(value)}")
    if not 0.0 <= value <= 2.0:
        raise ValueError(f"must be between 0 and 2, got {value}")
    return float(value)


def _tools(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of tool names or globs, e.g. [read, fs_search, mcp_*]")
    return tuple(v.strip() for v in value)


def _reasoning(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("expected fields: enabled, effort (low|medium|high), max_tokens, exclude")
    known = {"enabled": bool, "exclude": bool, "effort": str, "max_tokens": int}
    for key, item in value.items():
        kind = known.get(key)
        if kind is None:
            raise ValueError(f"unknown field {str(key)[:64]!r}; known: {', '.join(known)}")
        if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
            raise ValueError(f"{key}: expected {kind.__name__}, got {_kind(item)}")
    if value.get("effort") is not None and value["effort"] not in REASONING_EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(REASONING_EFFORTS)}, got {value['effort'][:64]!r}")
    return dict(value)


FIELDS: dict[str, Callable[[Any], Any]] = {
    "id": _text,
    "title": _text,
    "description": _text,
    "model": _text,
    "tools": _tools,
    "max_tool_failure_per_turn": _int(0),
    "max_requests_per_turn": _int(1),
    "temperature": _temperature,
    "reasoning": _reasoning,
}


def parse_agent(text: str, path: Path, source: str, known: Iterable[str] = ()) -> tuple[Agent | None, list[ConfigProblem]]:
    """One definition: the agent (None when it cannot be used) and its problems, each at its line."""
    layer = USER if source == USER else "workspace"

    def problem(message: str, line: int, key: str = "") -> ConfigProblem:
        return ConfigProblem(layer, key, message, path, line)

    try:
        doc = parse(text)
    except FrontMatterError as exc:
        return None, [problem(f"{exc}; this agent is not loaded", exc.line)]
    problems: list[ConfigProblem] = []
    values: dict[str, Any] = {}
    bad = False
    for key, value in doc.fields.items():
        check_value = FIELDS.get(key)
        if check_value is None:
            why = "not used by forge-lsp" if key in UNUSED_FIELDS else f"unknown agent field; known: {', '.join(FIELDS)}"
            problems.append(problem(why, doc.line(key), key))
            continue
        if value is None:
            continue
        try:
            values[key] = check_value(value)
        except ValueError as exc:
            problems.append(problem(f"{key}: {exc}; this agent is not loaded", doc.line(key)))
            bad = True
    agent_id = values.get("id", path.stem)
    if not AGENT_ID.fullmatch(agent_id):
        line = doc.line("id") if "id" in values else 1
        problems.append(problem(f"id {agent_id[:64]!r}: letters, digits, '-', '_' and '.' only; this agent is not loaded", line))
        bad = True
    prompt = doc.body.strip("\n") or None
    if prompt is not None:
        try:
            check(prompt, frozenset(known) or None)
        except TemplateError as exc:
            message = str(exc)
            found = re.match(r"line (\d+): (.*)", message, re.S)
            line = doc.body_line + len(doc.body) - len(doc.body.lstrip("\n"))
            if found:
                line += int(found.group(1)) - 1
                message = found.group(2)
            problems.append(problem(f"system prompt: {message}; this agent is not loaded", line))
            bad = True
    if bad:
        return None, problems
    agent = Agent(
        id=agent_id,
        title=values.get("title", ""),
        description=values.get("description", ""),
        prompt=prompt,
        tools=values.get("tools"),
        model=values.get("model"),
        max_tool_failure_per_turn=values.get("max_tool_failure_per_turn"),
        max_requests_per_turn=values.get("max_requests_per_turn"),
        temperature=values.get("temperature"),
        reasoning=values.get("reasoning"),
        source=source,
        path=str(path),
        prompt_line=doc.body_line + len(doc.body) - len(doc.body.lstrip("\n")),
    )
    return agent, problems


@dataclass
class LoadedAgents:
    """The agents in force and what was found wrong (or ignored) while loading them."""

    agents: AgentSet = field(default_factory=AgentSet)
    problems: list[ConfigProblem] = field(default_factory=list)
    ignored: list[ConfigProblem] = field(default_factory=list)
    """The workspace's agent files, ignored because the workspace is not trusted."""


def _load_folder(loaded: LoadedAgents, folder: Path, source: str, known: Iterable[str], inside: Path | None) -> None:
    layer = USER if source == USER else "workspace"
    for path in definitions(folder):
        try:
            text = read_definition(path, inside)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            loaded.problems.append(ConfigProblem(layer, "", f"cannot be read ({reason}); this agent is not loaded", path, 1))
            continue
        agent, problems = parse_agent(text, path, source, known)
        loaded.problems.extend(problems)
        if agent is not None:
            loaded.agents.add(agent)


def load_agents(root: Path, user_dir: Path | None, *, trusted: bool, known: Iterable[str] = ()) -> LoadedAgents:
    """The built-in agents, the user's, then the workspace's (trusted only); by id the later replaces the earlier."""
    loaded = LoadedAgents()
    known = frozenset(known)
    if user_dir is not None:
        _load_folder(loaded, user_dir, USER, known, None)
    folder = root / AGENTS_DIR
    if trusted:
        _load_folder(loaded, folder, WORKSPACE, known, root)
    else:
        message = "ignored because this workspace is not trusted: an agent shapes what the model is told and may use"
        for path in definitions(folder):
            loaded.ignored.append(ConfigProblem("workspace", "", f"{AGENTS_DIR / path.name}: {message}", path, 1, UNTRUSTED))
    return loaded
