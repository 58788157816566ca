"""YAML made to exhaust memory in a workspace's agent and command definitions (issue 34 item 9).

An alias bomb loads cheaply (the data shares its nodes) but is gigabytes once anything walks or prints it:
the front matter is bounded before it becomes data, and an error names the field and its type, never the value.
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.agents import parse_agent
from forge_lsp.frontmatter import FrontMatterError, parse

from support import forkserver

pytestmark = pytest.mark.timeout(90)

Record = Callable[[str, str, str], None]


def bomb(field: str, levels: int = 9) -> str:
    """An agent file whose field holds `levels` levels of nine aliases each (9**levels values expanded)."""
    items = ["  - &a0 [" + ", ".join(["lol"] * 9) + "]"]
    items += [f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return f"---\ndescription: helps\n{field}:\n" + "\n".join(items) + "\n---\nYou help.\n"


def test_an_alias_bomb_is_refused_naming_its_field(tmp_path: Path) -> None:
    from forge_lsp.frontmatter import MAX_FRONT_MATTER_VALUES

    with pytest.raises(FrontMatterError) as caught:
        parse(bomb("max_requests_per_turn"))
    message = str(caught.value)
    assert "max_requests_per_turn" in message and str(MAX_FRONT_MATTER_VALUES) in message
    assert caught.value.line == 3 and len(message) < 300
    # A front matter under the bound with aliases still loads (so the refusal above can be told apart).
    assert parse(bomb("tools", levels=2)).fields["tools"][1][0] == ["lol"] * 9


def test_a_wrong_value_is_named_by_its_field_and_type_not_printed(tmp_path: Path) -> None:
    text = "---\nmax_requests_per_turn: [" + ", ".join(["secret-ish"] * 2000) + "]\ntemperature: {a: 1}\n---\nhi\n"
    agent, problems = parse_agent(text, tmp_path / "helper.md", "workspace")
    assert agent is None
    messages = [p.message for p in problems]
    assert "max_requests_per_turn: expected a whole number, got a list; this agent is not loaded" in messages
    assert "temperature: expected a number, got fields; this agent is not loaded" in messages
    assert all("secret-ish" not in m for m in messages)


@pytest.mark.parametrize(
    "text",
    [
        "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nb\n",
        "---\nx:\n" + "".join("  " * i + "- \n" for i in range(3000)) + "---\nb\n",
    ],
    ids=["flow", "block"],
)
def test_nesting_too_deep_is_an_error_not_a_crash(text: str) -> None:
    with pytest.raises(FrontMatterError):
        parse(text)


def _limit_memory() -> None:
    # 1.5 GB of address space: the server's own ~250 MB and more, far below what the bomb's repr needs.
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))


def test_run_with_an_agent_that_is_an_alias_bomb(workspace: Path, record_reliability: Record) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n')
    (workspace / "script.json").write_text('{"responses": [{"text": "hello"}]}')
    agents = workspace / ".forge" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(bomb("max_requests_per_turn"))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    p = subprocess.run(
        [*forkserver.command(), "run", "--agent", "helper", "hi", "-w", str(workspace), "--trust"],
        capture_output=True,
        text=True,
        timeout=80,
        env=env,
        preexec_fn=_limit_memory,
    )
    assert p.returncode != 0
    assert "MemoryError" not in p.stderr and "Traceback" not in p.stderr and len(p.stderr) < 4000, p.stderr[-2000:]
    assert "helper.md:3" in p.stderr and "max_requests_per_turn" in p.stderr, p.stderr
    assert "lol" not in p.stderr
    record_reliability(
        "attack: YAML alias bomb in an agent's front matter",
        "max_requests_per_turn holding 9 levels of 9 aliases (387 million values); forge-lsp run --agent, 1.5 GB address space",
        "refused at load, naming the field and the limit; no value printed, no memory blow-up",
    )
