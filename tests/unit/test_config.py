"""Layered config: precedence, sources, problems with lines, last good config, no API keys."""

from __future__ import annotations

from pathlib import Path

from forge_lsp.config import ConfigLoader, key_line, snake_keys


def loader(root: Path, user: str | None = None) -> ConfigLoader:
    user_path = root.parent / "user.toml"
    if user is not None:
        user_path.write_text(user)
    return ConfigLoader(root, user_path)


def test_defaults_are_forges(workspace: Path) -> None:
    eff = loader(workspace).load()
    c = eff.config
    assert (c.max_tool_failure_per_turn, c.max_requests_per_turn, c.tool_timeout_secs) == (3, 100, 300)
    assert c.shell.fail_on_nonzero_exit is True
    assert set(eff.sources.values()) == {"default"}


def test_precedence_default_user_editor_workspace(workspace: Path) -> None:
    ld = loader(workspace, "max_tool_failure_per_turn = 4\nmax_requests_per_turn = 50\ntool_timeout_secs = 20\n")
    ld.set_editor({"maxToolFailurePerTurn": 5, "maxRequestsPerTurn": 60, "serverPath": "/usr/bin/forge-lsp"})
    (workspace / ".forge.toml").write_text(
        "max_tool_failure_per_turn = 6\n[tools.shell]\nmax_failures = 2\ndeny = ['rm -rf *']\n"
    )
    eff = ld.load()
    assert eff.config.max_tool_failure_per_turn == 6
    assert eff.config.max_requests_per_turn == 60
    assert eff.config.tool_timeout_secs == 20
    assert eff.config.retry.max_attempts == 8
    assert eff.config.per_tool_limits() == {"shell": 2}
    assert eff.config.shell.deny == ("rm -rf *",)
    shown = eff.show()
    assert shown["max_tool_failure_per_turn"] == {"value": 6, "source": "workspace"}
    assert shown["max_requests_per_turn"] == {"value": 60, "source": "editor"}
    assert shown["tool_timeout_secs"] == {"value": 20, "source": "user"}
    assert shown["retry.max_attempts"] == {"value": 8, "source": "default"}
    assert eff.problems == []


def test_unknown_key_and_bad_value_reported_with_line(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "x/y"\n\n[retry]\nmax_attempts = "lots"\ntool_max_failure_limit = 10\n')
    eff = loader(workspace).load()
    problems = sorted((p.line, p.key, p.message) for p in eff.problems)
    assert problems == [
        (4, "retry.max_attempts", "expected an integer, got a string ('lots')"),
        (5, "retry.tool_max_failure_limit", "unknown key"),
    ]
    assert all(p.path == workspace / ".forge.toml" for p in eff.problems)


def test_last_good_config_stays_in_force(workspace: Path) -> None:
    ld = loader(workspace)
    cfg = workspace / ".forge.toml"
    cfg.write_text("max_tool_failure_per_turn = 5\n")
    assert ld.load().config.max_tool_failure_per_turn == 5
    cfg.write_text("max_tool_failure_per_turn = -1\n")
    eff = ld.load()
    assert eff.config.max_tool_failure_per_turn == 5
    assert eff.problems[0].line == 1 and "must be >= 0" in eff.problems[0].message
    cfg.write_text("max_tool_failure_per_turn = [\n")
    eff = ld.load()
    assert eff.config.max_tool_failure_per_turn == 5
    assert "invalid TOML" in eff.problems[0].message and eff.problems[0].line is not None
    cfg.write_text("max_tool_failure_per_turn = 2\n")
    eff = ld.load()
    assert (eff.config.max_tool_failure_per_turn, eff.problems) == (2, [])


def test_api_key_in_workspace_file_is_refused(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "openai/gpt-4o"\napi_key = "sk-secret"\n')
    eff = loader(workspace).load()
    (problem,) = eff.problems
    assert problem.key == "api_key" and problem.line == 2
    assert "environment" in problem.message
    assert "sk-secret" not in str(eff.show())


def test_bad_editor_settings_reported(workspace: Path) -> None:
    ld = loader(workspace)
    ld.set_editor({"maxToolFailurePerTurn": "three"})
    eff = ld.load()
    assert eff.config.max_tool_failure_per_turn == 3
    assert eff.problems[0].layer == "editor"


def test_key_line_finds_dotted_and_inline_keys() -> None:
    text = '# c\nmodel = "a"\n[tools.shell]\ndeny = []\n[retry]\nmax_attempts = 2\n'
    assert key_line(text, "tools.shell.deny") == 4
    assert key_line(text, "retry.max_attempts") == 6
    assert key_line("retry.min_delay_ms = 1\n", "retry.min_delay_ms") == 1


def test_snake_keys() -> None:
    assert snake_keys({"maxToolFailurePerTurn": 1, "retry": {"minDelayMs": 2}}) == {
        "max_tool_failure_per_turn": 1,
        "retry": {"min_delay_ms": 2},
    }
