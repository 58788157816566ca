"""Agents: definitions (front matter errors at their line), precedence, tool filtering, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge_lsp.agents import AGENTS_DIR, load_agents, parse_agent, user_agents_dir
from forge_lsp.config import UNTRUSTED
from forge_lsp.core.errors import UnknownAgent
from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.domain.agents import BUILTIN_AGENTS, AgentSet
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import Interrupt, Retry
from forge_lsp.templates import TemplateEngine

from fakes import FakeModel, Harness, answer, call, tools

SAGE = AgentSet().get("sage")
MUSE = AgentSet().get("muse")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(text: str) -> list[tuple[int | None, str]]:
    agent, problems = parse_agent(text, Path("/x/a.md"), "user", TemplateEngine().known())
    return [(p.line, p.message) for p in problems]


def test_a_definition_is_front_matter_then_the_prompt() -> None:
    text = "---\nid: reviewer\ntitle: Reviewer\ntools: [read, 'mcp_*']\nmax_requests_per_turn: 7\n---\n\nYou review.\n"
    agent, problems = parse_agent(text, Path("/u/reviewer.md"), "user")
    assert problems == [] and agent is not None
    assert (agent.id, agent.title, agent.tools, agent.max_requests_per_turn) == ("reviewer", "Reviewer", ("read", "mcp_*"), 7)
    assert agent.prompt == "You review." and agent.prompt_line == 8 and agent.source == "user"
    assert agent.allows("mcp_github_search") and agent.allows("read") and not agent.allows("write")
    # No id: the file's name.
    agent, _ = parse_agent("---\ntitle: T\n---\nbody\n", Path("/u/helper.md"), "user")
    assert agent is not None and agent.id == "helper"


def test_front_matter_errors_are_at_their_line_and_say_the_agent_is_not_loaded() -> None:
    # A YAML error: reported at the line PyYAML names (counted in the file, the '---' included).
    found = problems_of("---\nid: x\ntools: [read, write\nmodel: y\n---\nbody\n")
    assert len(found) == 1 and found[0][0] in (3, 4, 5) and "not valid YAML" in found[0][1]
    assert "not loaded" in found[0][1]
    found = problems_of("---\nid: x\n  bad: indent: here\n---\n")
    assert found[0][0] == 3, found
    # A bad value at its key's line.
    assert problems_of("---\nid: x\ntitle: X\nmax_requests_per_turn: 0\n---\n") == [
        (4, "max_requests_per_turn: must be at least 1, got 0; this agent is not loaded")
    ]
    assert problems_of("---\nid: x\ntools: read\n---\n")[0][0] == 3
    # An unknown key is ignored alone (the agent loads), at its line.
    agent, problems = parse_agent("---\nid: x\n\nsubagent: true\n---\n", Path("/x/a.md"), "user")
    assert agent is not None and [(p.line, p.key) for p in problems] == [(4, "subagent")]
    # No front matter, an unclosed one, a list instead of fields.
    assert problems_of("hello\n")[0][0] == 1 and "no front matter" in problems_of("hello\n")[0][1]
    assert "never closed" in problems_of("---\nid: x\n")[0][1]
    assert "fields" in problems_of("---\n- a\n- b\n---\n")[0][1]
    # A prompt outside the safe grammar: at its line in the file.
    found = problems_of("---\nid: x\n---\n\nline one\n{{x.__class__}}\n")
    assert found[0][0] == 6 and "system prompt" in found[0][1]


def test_precedence_is_workspace_then_user_then_builtin_and_a_bad_file_spares_the_others(tmp_path: Path) -> None:
    root, user = tmp_path / "ws", tmp_path / "user" / "agents"
    write(user / "sage.md", "---\nid: sage\ntitle: User sage\n---\nuser\n")
    write(user / "helper.md", "---\ntitle: Helper\n---\nhelp\n")
    write(user / "broken.md", "---\nid: [\n---\n")
    write(root / AGENTS_DIR / "s.md", "---\nid: sage\ntitle: Workspace sage\n---\nws\n")
    loaded = load_agents(root, user, trusted=True)
    sage = loaded.agents.get("sage")
    assert sage is not None and sage.title == "Workspace sage" and sage.source == "workspace"
    assert loaded.agents.ids() == ["forge", "muse", "sage", "helper"]
    assert [(p.path.name if p.path else None, p.line) for p in loaded.problems] == [("broken.md", 2)]
    # Untrusted: the workspace's files are ignored, each reported once as such.
    loaded = load_agents(root, user, trusted=False)
    sage = loaded.agents.get("sage")
    assert sage is not None and sage.title == "User sage"
    assert [(p.code, p.path.name if p.path else None) for p in loaded.ignored] == [(UNTRUSTED, "s.md")]


def test_builtin_agents_and_their_tools() -> None:
    assert [a.id for a in BUILTIN_AGENTS] == ["forge", "muse", "sage"]
    names = ["read", "write", "patch", "multi_patch", "remove", "undo", "fs_search", "shell", "fetch"]
    names += ["todo_write", "todo_read", "followup", "mcp_x"]
    assert AgentSet().get("forge").filter(names) == names  # type: ignore[union-attr]
    assert SAGE is not None and SAGE.filter(names) == ["read", "fs_search", "fetch", "followup"]
    assert MUSE is not None and MUSE.filter(names) == [
        "read", "write", "patch", "multi_patch", "fs_search", "fetch", "todo_write", "todo_read", "followup"
    ]  # fmt: skip


async def test_a_tool_the_agent_lacks_is_not_offered_and_a_call_to_it_fails_in_the_tracker(workspace: Path) -> None:
    model = FakeModel([tools(call("write", "w1", file_path="a.txt", content="x")), answer("ok")])
    h = Harness(workspace, model, agent=SAGE)
    summary = await h.run()
    assert model.offered[0] == ["read", "fs_search", "fetch", "followup"]
    assert not (workspace / "a.txt").exists()
    assert summary.failures == 1
    (retry,) = [e for e in h.events if isinstance(e, Retry)]
    assert retry.tool == "write" and "tool write is not available to agent sage" in retry.error
    # Repeated, it maxes out like any failing tool.
    again = [tools(call("shell", f"s{i}", command="ls")) for i in range(3)]
    h = Harness(workspace, FakeModel(again), agent=SAGE, config=ForgeConfig(max_tool_failure_per_turn=3))
    summary = await h.run()
    assert summary.status.value == "interrupted"
    (interrupt,) = [e for e in h.events if isinstance(e, Interrupt)]
    assert interrupt.reason.errors == {"shell": 3}  # type: ignore[attr-defined]


async def test_muse_writes_under_plans_only(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "plans").mkdir()
    batch = tools(
        call("write", "w1", file_path="plans/p.md", content="# plan\n"),
        call("write", "w2", file_path="src/a.py", content="x = 1\n"),
        call("write", "w3", file_path="plans/../src/b.py", content="x = 1\n"),
    )
    h = Harness(workspace, FakeModel([batch, answer("ok")]), agent=MUSE)
    summary = await h.run()
    assert (workspace / "plans" / "p.md").read_text() == "# plan\n"
    assert not (workspace / "src" / "a.py").exists() and not (workspace / "src" / "b.py").exists()
    assert summary.failures == 2
    causes = [e.error for e in h.events if isinstance(e, Retry)]
    assert causes == ["agent muse writes only under plans/: src/a.py is refused"] * 1 + [
        "agent muse writes only under plans/: src/b.py is refused"
    ]


def test_the_agent_wins_over_config_for_the_limits_and_config_fills_the_rest(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    write(user, "max_tool_failure_per_turn = 5\nmax_requests_per_turn = 40\ntemperature = 0.3\n")
    write(user_agents_dir(user) / "strict.md", "---\nmax_tool_failure_per_turn: 1\n---\nbe strict\n")
    write(user_agents_dir(user) / "warm.md", "---\nmax_requests_per_turn: 9\ntemperature: 1.2\n---\nbe warm\n")
    runtime = WorkspaceRuntime(workspace, user_config=user)
    try:
        strict = runtime.turn_config(runtime.agent("strict"))
        assert (strict.max_tool_failure_per_turn, strict.max_requests_per_turn, strict.temperature) == (1, 40, 0.3)
        warm = runtime.turn_config(runtime.agent("warm"))
        assert (warm.max_tool_failure_per_turn, warm.max_requests_per_turn, warm.temperature) == (5, 9, 1.2)
        forge = runtime.turn_config(runtime.agent("forge"))
        assert (forge.max_tool_failure_per_turn, forge.max_requests_per_turn) == (5, 40)
    finally:
        runtime.close()


def test_set_agent_is_kept_with_the_conversation_and_status_shows_it(workspace: Path) -> None:
    runtime = WorkspaceRuntime(workspace, trusted=True)
    try:
        assert runtime.status()["agent"] == "forge"
        first = runtime.current_conversation()
        runtime.set_agent("sage")
        assert runtime.status()["agent"] == "sage" and runtime.list_agents()["current"] == "sage"
        with pytest.raises(UnknownAgent, match="unknown agent 'nope'; agents: forge, muse, sage"):
            runtime.set_agent("nope")
        runtime.new_conversation()
        assert runtime.status()["agent"] == "forge"
        runtime.open_conversation(first)
        assert runtime.status()["agent"] == "sage"
    finally:
        runtime.close()
    again = WorkspaceRuntime(workspace, trusted=True)
    try:
        assert again.status()["agent"] == "sage"  # kept in the state database
        listed = again.list_agents()["agents"]
        assert [a["id"] for a in listed] == ["forge", "muse", "sage"]
        assert listed[2] == {
            "id": "sage",
            "title": "Sage",
            "description": listed[2]["description"],
            "source": "builtin",
            "tools": ["read", "fs_search", "fetch", "followup"],
        }
    finally:
        again.close()


def test_an_agents_prompt_is_a_template_with_the_system_info_partial(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    body = "You review.\n{{> forge-partial-system-info.md }}\nTools: {{#each tool_names}}{{this}} {{/each}}\n"
    write(user_agents_dir(user) / "reviewer.md", "---\ntools: [read]\n---\n" + body)
    runtime = WorkspaceRuntime(workspace, user_config=user)
    try:
        from forge_lsp.core.runtime import BoundTools
        from forge_lsp.tools.base import ToolContext
        from forge_lsp.tools.workspace import Workspace

        agent = runtime.agent("reviewer")
        bound = BoundTools(runtime.registry, ToolContext(Workspace(workspace), runtime.config), agent=agent)
        prompt = runtime._system_prompt(bound, "", agent)
        assert prompt.startswith("You review.\n<system_information>")
        assert f"<current_working_directory>{workspace.resolve()}</current_working_directory>" in prompt
        assert prompt.endswith("\nTools: read ")
        sage = runtime._system_prompt(BoundTools(runtime.registry, bound.ctx, agent=SAGE), "", SAGE)
        assert "You are Sage" in sage and "Available tools: read, fs_search, fetch, followup." in sage
    finally:
        runtime.close()


def test_workspace_agents_join_the_trust_fingerprint_and_stay_committable(workspace: Path) -> None:
    import subprocess

    from forge_lsp.state.store import StateStore
    from forge_lsp.trust import TrustStore

    agent = write(workspace / AGENTS_DIR / "helper.md", "---\ntitle: Helper\n---\nhelp\n")
    store = TrustStore(workspace.parent / "trust.json")
    store.trust(workspace)
    assert store.state(workspace) == "trusted"
    agent.write_text("---\ntitle: Helper\ntools: ['*']\n---\nhelp\n", encoding="utf-8")
    assert store.state(workspace) == "changed"
    # .forge/.gitignore (written with the state) keeps the state out of git, not the agents.
    StateStore(workspace).close()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    ignored = subprocess.run(["git", "-C", str(workspace), "check-ignore", "-q", ".forge/agents/helper.md"])
    assert ignored.returncode == 1
    state = subprocess.run(["git", "-C", str(workspace), "check-ignore", "-q", ".forge/state.sqlite3"])
    assert state.returncode == 0


def test_an_untrusted_workspaces_agents_are_reported_with_the_other_ignored_keys(workspace: Path) -> None:
    write(workspace / AGENTS_DIR / "helper.md", "---\ntitle: Helper\n---\nhelp\n")
    runtime = WorkspaceRuntime(workspace)
    try:
        assert "helper.md" in runtime.ignored_keys()
        assert runtime.agents.agents.get("helper") is None
        runtime.set_trusted(True)
        assert runtime.agent("helper").source == "workspace" and runtime.ignored_keys() == []
    finally:
        runtime.close()


def test_an_unknown_agent_whose_file_is_broken_or_ignored_says_so(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    write(user_agents_dir(user) / "reviewer.md", "---\nmax_requests_per_turn: 0\n---\nbody\n")
    write(workspace / AGENTS_DIR / "helper.md", "---\ntitle: Helper\n---\nhelp\n")
    runtime = WorkspaceRuntime(workspace, user_config=user)
    try:
        with pytest.raises(UnknownAgent, match=r"unknown agent 'reviewer' \(.*reviewer.md:2 is not loaded: max_requests"):
            runtime.agent("reviewer")
        with pytest.raises(
            UnknownAgent, match=r"unknown agent 'helper' \(.*helper.md is ignored: this workspace is not trusted\)"
        ):
            runtime.agent("helper")
    finally:
        runtime.close()


def test_an_agents_folder_linked_out_of_the_workspace_cannot_be_trusted(workspace: Path, tmp_path: Path) -> None:
    from forge_lsp.trust import refusal

    outside = tmp_path / "elsewhere"
    write(outside / "yolo.md", "---\ntools: ['*']\n---\nanything\n")
    (workspace / ".forge").mkdir()
    (workspace / AGENTS_DIR).symlink_to(outside)
    reason = refusal(workspace)
    assert reason is not None and ".forge/agents is a link outside the workspace" in reason


def test_an_agents_reasoning_reaches_litellm_as_its_arguments() -> None:
    from forge_lsp.llm.litellm_adapter import reasoning_kwargs

    assert reasoning_kwargs(None) == {}
    assert reasoning_kwargs({"effort": "high"}) == {"reasoning_effort": "high"}
    assert reasoning_kwargs({"max_tokens": 2048}) == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert reasoning_kwargs({"enabled": False, "effort": "high"}) == {}
    found = problems_of("---\nid: x\nreasoning:\n  effort: extreme\n---\n")
    assert found == [(3, "reasoning: effort must be one of low, medium, high, got 'extreme'; this agent is not loaded")]


async def test_write_under_holds_for_every_tool_that_changes_files(workspace: Path, record_reliability: Any) -> None:
    # remove and undo take `path`, not `file_path`: the limit read file_path only, and knew write, patch and
    # multi_patch by name. Each tool now declares its path argument and whether it changes files.
    from dataclasses import replace as with_

    planner = with_(MUSE, tools=None)  # every tool, still kept to plans/
    (workspace / "src").mkdir()
    (workspace / "plans").mkdir()
    (workspace / "src" / "a.py").write_text("keep\n")
    (workspace / "plans" / "old.md").write_text("old\n")
    batch = tools(
        call("remove", "r1", path="src/a.py"),
        call("undo", "u1", path="src/a.py"),
        call("shell", "s1", command="rm src/a.py"),
        call("remove", "r2", path="plans/old.md"),
        call("read", "d1", file_path="src/a.py"),
    )
    h = Harness(workspace, FakeModel([batch, answer("ok")]), agent=planner)
    summary = await h.run()
    assert (workspace / "src" / "a.py").read_text() == "keep\n"
    assert not (workspace / "plans" / "old.md").exists()  # under plans/: allowed
    causes = {e.call_id: e.error for e in h.events if isinstance(e, Retry)}
    assert causes == {
        "r1": "agent muse writes only under plans/: src/a.py is refused",
        "u1": "agent muse writes only under plans/: src/a.py is refused",
        "s1": "agent muse writes only under plans/: shell may change any file, so it is refused",
    }
    assert summary.failures == 3
    record_reliability(
        "attack: an agent kept to plans/ removing or undoing a file outside it",
        "remove and undo (argument `path`, not `file_path`) and the shell, by an agent with write_under plans/",
        "each refused by the agent's limit (every tool's path argument comes from its own definition)",
    )


def test_every_tool_declares_the_argument_that_names_its_file() -> None:
    from forge_lsp.tools.registry import ALL_TOOLS

    for tool in ALL_TOOLS:
        names = set(tool.parameters["properties"])
        assert tool.path_arg == next(iter(names & {"file_path", "path"}), None), tool.name
    changing = {t.name for t in ALL_TOOLS if t.changes_files}
    assert changing == {"write", "patch", "multi_patch", "remove", "undo", "shell"}
