"""MCP pieces without a server: names, the sources and their merge, ${NAME}, trust, tracker globs, content."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from forge_lsp.config import UNTRUSTED, ConfigLoader
from forge_lsp.domain.tracker import ToolErrorTracker
from forge_lsp.mcp_config import acp_servers, load_servers, parse_entry
from forge_lsp.redact import redact
from forge_lsp.tools.mcp import names
from forge_lsp.tools.mcp.content import result_text
from forge_lsp.trust import survey


def test_names_are_sanitized_capped_and_unique() -> None:
    assert names.tool_name("git", "status") == "mcp_git_status"
    assert names.tool_name("my server", "a.b/c") == "mcp_my_server_a_b_c"
    long = names.tool_name("s", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp_s_xxx")
    assert names.tool_name("s", "x" * 100) == long and long != names.tool_name("s", "x" * 99 + "y")
    got = names.assign([("a", "b.c"), ("a", "b_c"), ("a_b", "c")])
    assert sorted(got.values()) == ["mcp_a_b_c", "mcp_a_b_c_2", "mcp_a_b_c_3"]
    assert got == names.assign(reversed(list(got)))  # the same whatever the order they come in
    assert all(len(n) <= 64 for n in names.assign([("s", "x" * 100), ("s", "x" * 100 + "!")]).values())


def write(path: Path, servers: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def test_sources_merge_later_wins_and_untrusted_workspace_starts_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    user = write(tmp_path / "user" / "mcp.json", {"a": {"command": "ua"}, "b": {"command": "ub"}})
    editor = {"mcpServers": {"b": {"command": "eb"}, "c": {"url": "http://127.0.0.1:1/mcp"}}}
    write(root / ".mcp.json", {"c": {"command": "touch", "args": ["pwned"]}, "d": {"command": "wd", "disabled": True}})
    trusted = load_servers(user, editor, root, trusted=True)
    assert {n: (s.source, s.command or s.url) for n, s in trusted.servers.items()} == {
        "a": ("user", "ua"), "b": ("editor", "eb"), "c": ("workspace", "touch"), "d": ("workspace", "wd")
    }  # fmt: skip
    assert trusted.servers["d"].disabled and trusted.servers["c"].line == 3
    untrusted = load_servers(user, editor, root, trusted=False)
    assert untrusted.servers["c"].source == "editor" and "d" not in untrusted.servers
    ignored = [(p.key, p.line, p.code) for p in untrusted.problems]
    assert ignored == [("mcpServers.c", 3, UNTRUSTED), ("mcpServers.d", 9, UNTRUSTED)]


def test_bad_entries_are_reported_alone(tmp_path: Path) -> None:
    user = write(tmp_path / "mcp.json", {"ok": {"command": "x"}, "bad": {"args": ["no command"]}, "bad2": {"url": "ftp://x"}})
    got = load_servers(user, None, tmp_path / "ws", trusted=False)
    assert list(got.servers) == ["ok"]
    assert [(p.key, p.line) for p in got.problems] == [("mcpServers.bad", 6), ("mcpServers.bad2", 11)]
    assert "either a command" in got.problems[0].message
    (tmp_path / "mcp.json").write_text("{not json")
    problem = load_servers(user, None, tmp_path / "ws", trusted=False).problems[0]
    assert "invalid JSON" in problem.message and problem.path == user


def test_names_expand_from_the_environment_and_become_secrets() -> None:
    env = {"TOKEN_X": "s3cret-value-123", "HOME": "/home/me"}
    spec = parse_entry("gh", {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN_X}"}}, "user", env)
    assert spec.headers == (("Authorization", "Bearer s3cret-value-123"),) and spec.secrets == ("s3cret-value-123",)
    spec = parse_entry("x", {"command": "c", "args": ["${HOME}/a", "${NOPE:-dflt}"], "env": {"K": "${MISSING}"}}, "user", env)
    assert spec.args == ("/home/me/a", "dflt") and spec.secrets == ()
    assert spec.error == "${MISSING} is not set in the environment"


def test_an_added_secret_is_redacted() -> None:
    from forge_lsp.redact import add_secrets

    add_secrets(["zq-very-private-9"])
    assert redact("token zq-very-private-9 here") == "token [REDACTED] here"


def test_editor_settings_keep_their_names(tmp_path: Path) -> None:
    loader = ConfigLoader(tmp_path, tmp_path / "config.toml")
    loader.set_editor({"mcpServers": {"myServer": {"command": "x", "env": {"GITHUB_TOKEN": "t"}}}, "maxRequestsPerTurn": 5})
    effective = loader.load()
    assert not effective.problems and effective.config.max_requests_per_turn == 5
    got = load_servers(tmp_path / "mcp.json", loader.editor_raw, tmp_path, trusted=False)
    assert list(got.servers) == ["myServer"] and got.servers["myServer"].env == (("GITHUB_TOKEN", "t"),)


def test_acp_session_servers() -> None:
    got = acp_servers(
        [
            {"name": "t", "command": "mcp-server-time", "args": [], "env": [{"name": "A", "value": "b"}]},
            {"type": "http", "name": "h", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "X", "value": "y"}]},
            {"command": "nameless"},
        ]
    )
    assert got.servers["t"].env == (("A", "b"),) and got.servers["t"].source == "session"
    assert got.servers["h"].transport == "http" and got.servers["h"].headers == (("X", "y"),)
    assert len(got.problems) == 1


def test_mcp_json_joins_the_trust_hash(tmp_path: Path) -> None:
    before = survey(tmp_path)
    assert ".mcp.json" not in before.files
    write(tmp_path / ".mcp.json", {"x": {"command": "x"}})
    after = survey(tmp_path)
    assert ".mcp.json" in after.files and after.fingerprint != before.fingerprint


def test_per_tool_limits_by_glob() -> None:
    tracker = ToolErrorTracker(3, {"mcp_github_*": 1, "mcp_github_issue_*": 2, "mcp_x_y": 5})
    assert tracker.limit_for("mcp_github_search") == 1
    assert tracker.limit_for("mcp_github_issue_read") == 2  # the longest glob wins
    assert tracker.limit_for("mcp_x_y") == 5 and tracker.limit_for("shell") == 3


def test_tools_tables_may_name_mcp_tools(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[tools."mcp_github_*"]\nmax_failures = 1\n[tools.mcp_git_status]\nmax_failures = 2\n')
    effective = ConfigLoader(tmp_path, tmp_path / "config.toml").load()
    assert not effective.problems
    assert effective.config.per_tool_limits() == {"mcp_github_*": 1, "mcp_git_status": 2}


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([SimpleNamespace(type="text", text="hello")], "hello"),
        (
            [SimpleNamespace(type="image", mime_type="image/png", data="AAAA")],
            "[image: image/png, 3 bytes; not shown to the model]",
        ),
        (
            [SimpleNamespace(type="resource", resource=SimpleNamespace(uri="file:///a", text="body"))],
            "[resource file:///a]\nbody",
        ),
    ],
)
def test_content_is_described(blocks: list[object], expected: str) -> None:
    assert result_text(SimpleNamespace(content=blocks, structured_content=None)) == expected


def test_a_server_schema_that_cannot_be_used_does_not_fail_the_call() -> None:
    """An MCP server's schema with a remote $ref or an invalid shape: nothing is fetched, the server checks its input."""
    from forge_lsp.tools.registry import check_arguments

    check_arguments({"a": 1}, {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}})
    check_arguments({"a": 1}, {"type": "no-such-type"})


def test_a_later_entry_that_cannot_be_used_still_wins_its_name(tmp_path: Path) -> None:
    """A later source wins per name even when its entry is wrong: the earlier same-named server does not start
    in its place (the problem says "this server is not started", and none of that name is)."""
    root = tmp_path / "ws"
    user = write(tmp_path / "user" / "mcp.json", {"a": {"command": "ua"}, "b": {"command": "ub"}, "c": {"command": "uc"}})
    editor = {"mcpServers": {"a": {"command": ""}}}
    write(root / ".mcp.json", {"b": {"url": "ftp://nope"}})
    got = load_servers(user, editor, root, trusted=True)
    assert {n: s.command for n, s in got.servers.items()} == {"c": "uc"}, got.servers
    assert [(p.layer, p.key) for p in got.problems] == [("editor", "mcpServers.a"), ("workspace", "mcpServers.b")]
    # An untrusted workspace is not a source at all: its wrong entry takes nothing away.
    assert set(load_servers(user, editor, root, trusted=False).servers) == {"b", "c"}
    # A session's wrong entry is that session's failed server of the name, with the reason.
    session = acp_servers([{"name": "t", "command": "", "args": []}])
    assert session.servers["t"].error and "command" in session.servers["t"].error
