"""forge-lsp run --agent as a user runs it: a real process, real exit codes."""

from __future__ import annotations

from pathlib import Path

from test_cli import forge, write_script

WRITE = {"tool_calls": [{"name": "write", "arguments": {"file_path": "hi.txt", "content": "hi\n"}}]}


def test_run_agent_keeps_the_turn_to_the_agents_tools(workspace: Path) -> None:
    write_script(workspace, WRITE, {"text": "Could not write it."})
    p = forge("run", "write hi.txt", "-w", str(workspace), "--agent", "sage")
    assert p.returncode == 0, p.stderr
    assert "tool write is not available to agent sage" in p.stdout and not (workspace / "hi.txt").exists()
    assert "started (model scripted/script.json, agent sage)" in p.stdout
    # Without --agent: forge, every tool.
    write_script(workspace, WRITE, {"text": "Wrote it."})
    p = forge("run", "write hi.txt", "-w", str(workspace))
    assert p.returncode == 0, p.stderr
    assert (workspace / "hi.txt").read_text() == "hi\n"


def test_an_unknown_agent_is_a_usage_error_naming_the_agents(workspace: Path) -> None:
    p = forge("run", "hello", "-w", str(workspace), "--model", "scripted/echo", "--agent", "nope")
    assert p.returncode == 1, p.stderr  # EXIT_USAGE
    assert "--agent: unknown agent 'nope'; agents: forge, muse, sage" in p.stderr and p.stdout == ""


def test_a_users_agent_runs_with_its_own_model(workspace: Path, tmp_path: Path) -> None:
    config = tmp_path / "cfg" / "config.toml"
    (config.parent / "agents").mkdir(parents=True)
    config.write_text("")
    (config.parent / "agents" / "echoer.md").write_text("---\nmodel: scripted/echo\n---\nYou echo.\n")
    p = forge("run", "hello", "-w", str(workspace), "--agent", "echoer", env={"FORGE_LSP_CONFIG": str(config)})
    assert p.returncode == 0, p.stderr
    assert "Hello from the scripted model." in p.stdout
