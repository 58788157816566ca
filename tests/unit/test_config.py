"""Layered config: precedence, sources, problems with lines, last good config, no API keys."""

from __future__ import annotations

import time
from dataclasses import fields
from pathlib import Path

import pytest

from forge_lsp.config import ConfigLoader, key_line, snake_keys
from forge_lsp.domain.config import (
    HIGHER,
    KEYS,
    CompactConfig,
    FetchConfig,
    ForgeConfig,
    HookSettings,
    KeySpec,
    McpConfig,
    RetryConfig,
    ShellConfig,
    ToolConfig,
    VerifyConfig,
    default_values,
)

ForgeDefaults = ForgeConfig()


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


def test_every_key_is_one_row_of_the_table_and_one_field_of_the_config() -> None:
    sections = {"": ForgeConfig(), "retry.": RetryConfig(), "compact.": CompactConfig()}
    sections |= {"tools.shell.": ShellConfig(), "tools.fetch.": FetchConfig(), "tools.<name>.": ToolConfig()}
    sections |= {"mcp.": McpConfig(), "hooks.": HookSettings(), "verify.": VerifyConfig()}
    not_keys = {"trusted", "rule_origins", "retry", "compact", "shell", "fetch", "tools", "mcp", "hook_settings", "verify"}
    found = {
        prefix + f.name: getattr(obj, f.name)
        for prefix, obj in sections.items()
        for f in fields(obj)
        if prefix or f.name not in not_keys
    }
    assert found == {key: spec.default for key, spec in KEYS.items()}
    assert "tools.<name>.max_failures" not in default_values() and len(default_values()) == len(KEYS) - 1


def test_a_contradictory_key_row_is_refused() -> None:
    def check(v: object) -> object:
        return v

    with pytest.raises(ValueError, match="needs trust"):
        KeySpec("x", check, 1, looser=HIGHER)  # needing trust is the default: nothing to tighten
    with pytest.raises(ValueError, match="zero_is_off"):
        KeySpec("x", check, 1, trust=None, zero_is_off=True)
    with pytest.raises(ValueError, match="trust_if"):
        KeySpec("x", check, 1, trust=None, trust_if=bool)


def test_precedence_default_user_editor_workspace(workspace: Path) -> None:
    ld = loader(workspace, "max_tool_failure_per_turn = 4\nmax_requests_per_turn = 50\ntool_timeout_secs = 20\n")
    ld.set_editor({"maxToolFailurePerTurn": 5, "maxRequestsPerTurn": 60, "serverPath": "/usr/bin/forge-lsp"})
    (workspace / ".forge.toml").write_text(
        "max_tool_failure_per_turn = 6\n[tools.shell]\nmax_failures = 2\ndeny = ['rm -rf *']\n"
    )
    eff = ld.load(trusted=True)
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


def test_a_typo_is_told_the_key_it_is_closest_to(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text(
        "max_tool_failure = 2\nmax_request_per_turn = 9\n[compact]\nmessage_treshold = 3\nfoo = 1\n"
        "[tools.shell]\ndeni = ['x']\n[tools.read]\nmax_failure = 1\n"
    )
    eff = loader(workspace).load(trusted=True)
    assert sorted((p.key, p.message) for p in eff.problems) == [
        ("compact.foo", "unknown key"),
        ("compact.message_treshold", "unknown key (did you mean compact.message_threshold?)"),
        ("max_request_per_turn", "unknown key (did you mean max_requests_per_turn?)"),
        ("max_tool_failure", "unknown key (did you mean max_tool_failure_per_turn?)"),
        ("tools.read.max_failure", "unknown key (did you mean tools.read.max_failures?)"),
        ("tools.shell.deni", "unknown key (did you mean tools.shell.deny?)"),
    ]
    assert eff.config.max_tool_failure_per_turn == 3  # nothing was guessed: the default applies


def test_last_good_config_stays_in_force(workspace: Path) -> None:
    ld = loader(workspace)
    cfg = workspace / ".forge.toml"
    cfg.write_text("max_tool_failure_per_turn = 5\n")
    assert ld.load(trusted=True).config.max_tool_failure_per_turn == 5
    cfg.write_text("max_tool_failure_per_turn = -1\n")
    eff = ld.load(trusted=True)
    # A bad value is dropped alone (the default applies); the file still parses.
    assert eff.config.max_tool_failure_per_turn == 3
    assert eff.problems[0].line == 1 and "must be >= 0" in eff.problems[0].message
    cfg.write_text("max_tool_failure_per_turn = 5\n")
    assert ld.load(trusted=True).config.max_tool_failure_per_turn == 5
    cfg.write_text("max_tool_failure_per_turn = [\n")
    eff = ld.load(trusted=True)
    assert eff.config.max_tool_failure_per_turn == 5
    assert "invalid TOML" in eff.problems[0].message and eff.problems[0].line is not None
    assert eff.problems[0].message.endswith(
        "; .forge.toml is ignored as a whole, so its last good version stays in force until it is fixed"
    )
    cfg.write_text("max_tool_failure_per_turn = 2\n")
    eff = ld.load(trusted=True)
    assert (eff.config.max_tool_failure_per_turn, eff.problems) == (2, [])


def test_api_key_in_workspace_file_is_refused(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "openai/gpt-4o"\napi_key = "sk-secret"\n')
    eff = loader(workspace).load(trusted=True)
    (problem,) = eff.problems
    assert problem.key == "api_key" and problem.line == 2
    assert "environment" in problem.message
    assert "sk-secret" not in str(eff.show())


def test_bad_editor_settings_reported(workspace: Path) -> None:
    ld = loader(workspace)
    ld.set_editor({"maxToolFailurePerTurn": "three"})
    eff = ld.load(trusted=True)
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


def test_each_bad_key_is_dropped_alone_on_a_fresh_start(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text(
        'model = "ollama/qwen3"\nmax_tool_failure_per_turn = 4\ntypo_key = 1\n\n[retry]\nmax_attempts = "lots"\nmin_delay_ms = 5\n'
    )
    eff = loader(workspace).load(trusted=True)
    c = eff.config
    assert (c.model, c.max_tool_failure_per_turn, c.retry.min_delay_ms, c.retry.max_attempts) == ("ollama/qwen3", 4, 5, 8)
    assert sorted((p.key, p.line) for p in eff.problems) == [("retry.max_attempts", 6), ("typo_key", 3)]
    assert eff.sources["model"] == "workspace" and eff.sources["retry.max_attempts"] == "default"


def test_bad_editor_setting_dropped_alone(workspace: Path) -> None:
    ld = loader(workspace)
    ld.set_editor({"model": "ollama/qwen3", "maxToolFailurePerTurn": "three"})
    eff = ld.load()
    assert (eff.config.model, eff.config.max_tool_failure_per_turn) == ("ollama/qwen3", 3)
    assert [p.key for p in eff.problems] == ["maxToolFailurePerTurn"]  # as the settings spell it


def test_an_editor_settings_typo_is_told_in_the_settings_own_spelling(workspace: Path) -> None:
    """VS Code's and Neovim's settings are camelCase: the key and its fix are said so (a newcomer was told
    "max_tool_failure_per_turns ... did you mean max_tool_failure_per_turn?" for maxToolFailurePerTurns)."""
    ld = loader(workspace)
    ld.set_editor({"maxToolFailurePerTurns": 3, "retry": {"minDelayMz": 5}})
    told = sorted((p.key, p.message) for p in ld.load().problems)
    assert told == [
        ("maxToolFailurePerTurns", "unknown key (did you mean maxToolFailurePerTurn?)"),
        ("retry.minDelayMz", "unknown key (did you mean retry.minDelayMs?)"),
    ], told
    ld.set_editor({"max_tool_failure_per_turns": 4})  # written so, told so
    told = [(p.key, p.message) for p in ld.load().problems]
    assert told == [("max_tool_failure_per_turns", "unknown key (did you mean max_tool_failure_per_turn?)")], told


def test_no_default_model(workspace: Path) -> None:
    eff = loader(workspace).load()
    assert eff.config.model is None
    assert eff.show()["model"] == {"value": None, "source": "default"}


def test_unparsable_file_on_a_fresh_start_is_an_empty_layer(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "ollama/qwen3"\nmax_tool_failure_per_turn = [\n')
    eff = loader(workspace, 'model = "anthropic/claude"\n').load()
    assert eff.config.model == "anthropic/claude" and eff.sources["model"] == "user"
    assert [p.message.split(":")[0] for p in eff.problems] == ["invalid TOML"]


def bad_keys_text(n: int) -> str:
    text = "".join(f"bad_key_{i} = {i}\n" for i in range(n))
    return text + "[tools.shell]\n" + "".join(f"nope_{i} = 1\n" for i in range(n // 16))


def test_thousands_of_bad_keys_load_in_linear_time(workspace: Path, tmp_path: Path) -> None:
    text = bad_keys_text(8000)
    assert len(text) > 100_000
    (workspace / ".forge.toml").write_text(text)
    eff = loader(workspace).load()
    assert len(eff.problems) == 8500
    assert eff.problems[0].line == 1 and eff.problems[7999].line == 8000
    assert {p.line for p in eff.problems if p.key == "tools.shell.nope_499"} == {8501}
    # Linear: a quarter of the keys takes about a quarter of the time (quadratic: a sixteenth). A ratio of the
    # two, best of 5 interleaved, in this process's CPU time, so that the machine's load weighs on neither (an
    # absolute limit failed on a busy machine; so did best of 3, and best of 5 of the wall clock's time).
    small = tmp_path / "small"
    small.mkdir()
    (small / ".forge.toml").write_text(bad_keys_text(2000))
    best = {workspace: float("inf"), small: float("inf")}
    for _ in range(5):
        for root in (small, workspace):
            started = time.process_time()
            loader(root).load()
            best[root] = min(best[root], time.process_time() - started)
    ratio = best[workspace] / best[small]
    assert ratio < 8, f"4 times the keys took {ratio:.1f} times as long ({best[small]:.3f} s, then {best[workspace]:.3f} s)"


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 5000 + "]" * 5000 + "\n",
        "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",
        "[" + ".".join(["t"] * 5000) + "]\nx = 1\n",
    ],
    ids=["arrays", "inline-tables", "dotted-header"],
)
def test_deep_nesting_is_a_clear_error(workspace: Path, text: str) -> None:
    (workspace / ".forge.toml").write_text('model = "ollama/qwen3"\n' + text)
    eff = loader(workspace).load()
    assert eff.problems, "deep nesting must be reported"
    for p in eff.problems:
        assert "nested" in p.message and p.line == 2
    assert "RecursionError" not in " ".join(map(str, eff.problems))


def test_deep_editor_settings_do_not_recurse(workspace: Path) -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    ld = loader(workspace)
    ld.set_editor({"model": "ollama/qwen3", "x": deep})
    eff = ld.load()
    assert eff.config.model == "ollama/qwen3"
    assert len(eff.problems) == 1


def test_deny_and_confirm_are_unions_across_layers(workspace: Path) -> None:
    ld = loader(workspace, '[tools.shell]\nconfirm = ["*"]\ndeny = ["rm -rf *"]\n')
    ld.set_editor({"tools": {"shell": {"deny": ["curl *"]}}})
    (workspace / ".forge.toml").write_text("[tools.shell]\nconfirm = []\ndeny = []\n")
    for trusted in (True, False):
        shell = ld.load(trusted=trusted).config.shell
        assert shell.confirm == ("*",)
        assert shell.deny == ("rm -rf *", "curl *")
    (workspace / ".forge.toml").write_text('[tools.shell]\nconfirm = ["git push*"]\n')
    assert ld.load(trusted=True).config.shell.confirm == ("*", "git push*")


def test_shell_sandbox_keys(workspace: Path) -> None:
    ld = loader(workspace, '[tools.shell]\nsandbox = "bwrap"\nnetwork = true\nallow_env = ["PATH"]\n')
    shell = ld.load().config.shell
    assert (shell.sandbox, shell.network, shell.allow_env) == ("bwrap", True, ("PATH",))
    ld = loader(workspace, '[tools.shell]\nsandbox = "docker"\n')
    eff = ld.load()
    assert eff.config.shell.sandbox is None and "expected one of" in eff.problems[0].message


def test_fetch_private_networks_come_from_the_user_or_a_trusted_workspace(workspace: Path) -> None:
    assert loader(workspace).load().config.fetch.allow_private_networks is False
    assert loader(workspace, "[tools.fetch]\nallow_private_networks = true\n").load().config.fetch.allow_private_networks
    ld = loader(workspace, "")
    (workspace / ".forge.toml").write_text("[tools.fetch]\nmax_failures = 1\nallow_private_networks = true\n")
    eff = ld.load(trusted=False)
    assert eff.config.fetch.allow_private_networks is False and eff.config.per_tool_limits() == {"fetch": 1}
    (problem,) = eff.problems
    assert problem.key == "tools.fetch.allow_private_networks" and problem.line == 3 and "not trusted" in problem.message
    eff = ld.load(trusted=True)
    assert eff.config.fetch.allow_private_networks is True and eff.problems == []


# An untrusted workspace may tighten a limit, never loosen it (DESIGN "Trust": nothing may loosen the user's rules).
UNTRUSTED_LIMITS = (
    "max_tool_failure_per_turn = 50\n"  # 1: higher is looser (default 3)
    "max_requests_per_turn = 2\n"  # 2: tighter, applies
    "tool_timeout_secs = 100000\n"  # 3: looser than the user's 20
    "temperature = 1.5\n"  # 4: loosens nothing, applies
    "[retry]\n"
    "min_delay_ms = 0\n"  # 6: lower is looser
    "max_delay_secs = 600\n"  # 7: higher delay is stricter, applies
    "[compact]\n"
    "message_threshold = 0\n"  # 9: 0 = never compact: looser than 200
    "turn_threshold = 5\n"  # 10: 0 (off) by default, so 5 is tighter
    "[tools.shell]\n"
    "max_failures = 9\n"  # 12: looser than the general limit 3
    "timeout_secs = 10\n"  # 13: tighter than the user's tool_timeout_secs 20
    "[tools.fetch]\n"
    "max_failures = 1\n"  # 15: tighter
)


def test_untrusted_workspace_limits_only_tighten(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text(UNTRUSTED_LIMITS)
    ld = loader(workspace, "tool_timeout_secs = 20\n")
    eff = ld.load(trusted=False)
    c = eff.config
    assert (c.max_tool_failure_per_turn, c.max_requests_per_turn, c.tool_timeout_secs) == (3, 2, 20)
    assert c.temperature == 1.5
    assert (c.retry.min_delay_ms, c.retry.max_delay_secs) == (ForgeDefaults.retry.min_delay_ms, 600)
    assert (c.compact.message_threshold, c.compact.turn_threshold) == (200, 5)
    assert c.per_tool_limits() == {"fetch": 1}
    assert c.shell_timeout() == 10
    ignored = {(p.key, p.line) for p in eff.ignored}
    assert ignored == {
        ("max_tool_failure_per_turn", 1),
        ("tool_timeout_secs", 3),
        ("retry.min_delay_ms", 6),
        ("compact.message_threshold", 9),
        ("tools.shell.max_failures", 12),
    }
    by_key = {p.key: p.message for p in eff.ignored}
    assert "50 would loosen your limit; 3 is kept" in by_key["max_tool_failure_per_turn"]
    assert "20 is kept" in by_key["tool_timeout_secs"]
    # Trusted, the same file applies whole.
    c = ld.load(trusted=True).config
    assert (c.max_tool_failure_per_turn, c.tool_timeout_secs, c.retry.min_delay_ms) == (50, 100000, 0)
    assert c.compact.message_threshold == 0 and c.per_tool_limits() == {"shell": 9, "fetch": 1}


def test_untrusted_limit_compares_with_the_editor_setting(workspace: Path) -> None:
    ld = loader(workspace)
    ld.set_editor({"maxRequestsPerTurn": 10})
    (workspace / ".forge.toml").write_text("max_requests_per_turn = 20\n")
    eff = ld.load(trusted=False)
    assert eff.config.max_requests_per_turn == 10 and [p.key for p in eff.ignored] == ["max_requests_per_turn"]
    (workspace / ".forge.toml").write_text("max_requests_per_turn = 10\n")
    eff = ld.load(trusted=False)
    assert eff.config.max_requests_per_turn == 10 and eff.ignored == []


def test_a_misspelt_tool_table_is_an_unknown_key_with_the_closest_tool(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("[tools.shel]\nmax_failures = 2\n[tools.reed]\nmax_failures = 1\n")
    eff = loader(workspace).load(trusted=True)
    assert [(p.line, p.key, p.message) for p in eff.problems] == [
        (2, "tools.shel.max_failures", "unknown key (did you mean tools.shell.max_failures?)"),
        (4, "tools.reed.max_failures", "unknown key (did you mean tools.read.max_failures?)"),
    ]
    assert eff.config.per_tool_limits() == {}  # nothing was guessed
    ok = loader(workspace)
    (workspace / ".forge.toml").write_text("[tools.fetch]\nmax_failures = 5\n[tools.multi_patch]\nmax_failures = 4\n")
    assert ok.load(trusted=True).problems == []


def test_every_tool_a_config_may_name_is_a_tool_of_the_registry() -> None:
    from forge_lsp.domain.config import TOOL_NAMES
    from forge_lsp.tools.registry import ALL_TOOLS

    assert set(TOOL_NAMES) == {t.name for t in ALL_TOOLS}


def test_forge_lsp_config_naming_a_missing_file_is_reported(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = workspace.parent / "no-such-config.toml"
    monkeypatch.setenv("FORGE_LSP_CONFIG", str(missing))
    (problem,) = ConfigLoader(workspace).load().problems
    assert problem.path == missing and "FORGE_LSP_CONFIG" in problem.message and "does not exist" in problem.message
    # the default user file, absent, is no problem: most users have none
    monkeypatch.delenv("FORGE_LSP_CONFIG")
    assert ConfigLoader(workspace).load().problems == []


def test_problems_are_listed_by_file_then_line(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text(
        "zeta = 1\n[retry]\nmax_attempts = 'x'\n[compact]\nfoo = 1\n[tools.shell]\ntimeout_secs = 'y'\nalpha = 2\n"
    )
    eff = loader(workspace, user="[compact]\nbar = 1\n[retry]\nbaz = 2\n").load(trusted=True)
    where = [(p.layer, p.line) for p in eff.problems]
    assert where == [
        ("user", 2),
        ("user", 4),
        ("workspace", 1),
        ("workspace", 3),
        ("workspace", 5),
        ("workspace", 7),
        ("workspace", 8),
    ]


def test_a_float_where_an_integer_is_expected_is_called_a_float(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("max_requests_per_turn = 500.5\n")
    (problem,) = loader(workspace).load().problems
    assert problem.message == "expected an integer, got a float (500.5)"


def test_an_untrusted_workspace_may_name_a_builtin_script_but_not_a_script_file(workspace: Path) -> None:
    from forge_lsp.llm.builtin_scripts import BUILTIN

    for name in BUILTIN:
        (workspace / ".forge.toml").write_text(f'model = "scripted/{name}"\n')
        eff = loader(workspace).load(trusted=False)
        assert eff.config.model == f"scripted/{name}" and eff.ignored == [], name
    for model in ("scripted/script.json", "scripted/.forge/echo", "scripted/_warm-up", "scripted/"):
        (workspace / ".forge.toml").write_text(f'model = "{model}"\n')
        eff = loader(workspace).load(trusted=False)
        assert eff.config.model is None and [p.key for p in eff.ignored] == ["model"], model


def test_the_builtin_scripts_the_config_knows_are_the_shipped_ones() -> None:
    from forge_lsp.domain.config import BUILTIN_SCRIPTS
    from forge_lsp.llm.builtin_scripts import BUILTIN

    assert set(BUILTIN_SCRIPTS) == set(BUILTIN)


def test_a_file_that_does_not_parse_on_a_fresh_start_promises_no_last_good_version(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("max_tool_failure_per_turn = [\n")
    eff = loader(workspace).load(trusted=True)
    (problem,) = eff.problems
    assert problem.message.endswith("; .forge.toml is ignored as a whole, so nothing in it applies until it is fixed")
    assert "last good" not in problem.message and eff.sources["max_tool_failure_per_turn"] == "default"


@pytest.mark.parametrize("trusted", [False, True])
def test_edit_review_a_workspace_may_tighten_never_loosen(workspace: Path, trusted: bool) -> None:
    ld = loader(workspace)
    assert ld.load(trusted=trusted).config.edit_review == "auto"
    (workspace / ".forge.toml").write_text('edit_review = "confirm"\n')
    eff = ld.load(trusted=trusted)
    assert eff.config.edit_review == "confirm" and eff.sources["edit_review"] == "workspace" and not eff.problems
    ld = loader(workspace, 'edit_review = "confirm"\n')
    (workspace / ".forge.toml").write_text('\nedit_review = "auto"\n')
    eff = ld.load(trusted=trusted)
    assert eff.config.edit_review == "confirm" and eff.sources["edit_review"] == "user"
    (problem,) = eff.problems
    assert (problem.key, problem.line) == ("edit_review", 2)
    assert "'auto' would loosen your 'confirm'; a workspace may only tighten it" in problem.message
    ld.set_editor({"editReview": "auto"})  # the user's own levels decide among themselves
    assert ld.load(trusted=trusted).config.edit_review == "auto"
    (workspace / ".forge.toml").write_text('edit_review = "ask"\n')
    (problem,) = ld.load(trusted=trusted).problems
    assert "expected one of 'auto', 'confirm', got 'ask'" in problem.message
