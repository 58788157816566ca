"""What a trust decision covers (issue 34 items 1-3): an editor's own word, a revoke, the scripts definitions name,
and the files the server's own check looks at."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.trust import (
    CHANGED,
    TRUSTED,
    UNTRUSTED,
    EditorTrust,
    TrustStore,
    client_watches,
    editor_covers,
    survey,
    trust_files,
    watched_files,
)

TOML = 'model = "scripted/script.json"\n'


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / ".forge.toml").write_text(TOML)
    (workspace / "script.json").write_text('{"responses": [{"text": "hi"}]}')
    return workspace


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_editors_word_for_one_file_covers_a_workspace_of_that_file_alone(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("max_requests_per_turn = 7\n")
    word = EditorTrust("Neovim's own trust", {".forge.toml": sha(workspace / ".forge.toml")})
    assert word.covers_all(survey(workspace))
    assert not EditorTrust("x", {".forge.toml": "0" * 64}).covers_all(survey(workspace))  # another content
    (workspace / ".mcp.json").write_text("{}")
    assert not word.covers_all(survey(workspace))  # a file it never hashed
    assert EditorTrust("VS Code's own trust").covers_all(survey(workspace))  # the whole folder
    (workspace / ".mcp.json").unlink()
    (workspace / ".forge.toml").write_text(TOML)  # a script named: the word for .forge.toml does not cover it
    (workspace / "script.json").write_text("{}")
    word = EditorTrust("Neovim's own trust", {".forge.toml": sha(workspace / ".forge.toml")})
    assert not word.covers_all(survey(workspace))


def test_adopt_records_the_word_only_where_the_user_decided_nothing(ws: Path) -> None:
    store = TrustStore()
    vscode = EditorTrust("VS Code's own trust")
    assert store.adopt(ws, vscode) and store.state(ws) == TRUSTED
    (ws / "script.json").write_text('{"responses": []}')  # a pull
    assert not store.adopt(ws, vscode) and store.state(ws) == CHANGED
    store.trust(ws)
    store.revoke(ws)
    assert store.revoked(ws) and not store.adopt(ws, vscode) and store.state(ws) == UNTRUSTED
    store.trust(ws)  # trusting it again (forge-lsp trust, :ForgeTrust, the Trust button) ends the revoke
    assert not store.revoked(ws) and store.state(ws) == TRUSTED


def test_editor_covers_takes_only_paths_with_sha256_digests() -> None:
    assert editor_covers({".forge.toml": "A" * 64}) == {".forge.toml": "a" * 64}
    for bad in (None, [], {}, {".forge.toml": "short"}, {".forge.toml": 1}, {1: "a" * 64}):
        assert editor_covers(bad) is None


def test_the_runtime_trusts_by_the_store_once_the_editors_word_is_recorded(ws: Path) -> None:
    word = EditorTrust("VS Code's own trust")
    rt = WorkspaceRuntime(ws, editor_trust=word)
    try:
        assert rt.trusted and rt.config.model == "scripted/script.json"
    finally:
        rt.close()
    (ws / "script.json").write_text('{"responses": []}')
    rt = WorkspaceRuntime(ws, editor_trust=word)
    try:
        assert not rt.trusted and rt.trust_state() == CHANGED and rt.config.model is None
    finally:
        rt.close()


def test_a_script_a_definition_names_is_trust_relevant(ws: Path) -> None:
    agents = ws / ".forge" / "agents"
    commands = ws / ".forge" / "commands"
    agents.mkdir(parents=True)
    commands.mkdir(parents=True)
    (agents / "helper.md").write_text("---\nmodel: 'scripted/.forge/helper.json'\n---\nHelp.\n")
    (commands / "fix.md").write_text("---\nname: fix\nmodel: scripted/tools/fix.json\n---\nFix.\n")
    (commands / "echo.md").write_text("---\nmodel: scripted/echo\n---\nA builtin script: no file.\n")
    (commands / "notes.txt").write_text("model: scripted/not-a-definition.json\n")  # not a definition: names nothing
    names = [p.relative_to(ws).as_posix() for p in trust_files(ws)]
    assert names[-3:] == ["script.json", ".forge/helper.json", "tools/fix.json"], names
    assert "not-a-definition.json" not in " ".join(names)
    before = survey(ws).fingerprint
    (ws / "tools").mkdir()
    (ws / "tools" / "fix.json").write_text("{}")  # a pull adds the script the command names
    assert survey(ws).fingerprint != before


def test_a_definition_that_names_a_script_outside_cannot_be_trusted(ws: Path, tmp_path: Path) -> None:
    (ws / ".forge" / "agents").mkdir(parents=True)
    (ws / ".forge" / "agents" / "helper.md").write_text(f"---\nmodel: scripted/{tmp_path / 'out.json'}\n---\nx\n")
    found = survey(ws)
    assert found.reason is not None and "outside the workspace" in found.reason


def test_the_check_on_disk_looks_at_every_file_trust_covers(ws: Path) -> None:
    found = survey(ws)
    assert [p.name for p in watched_files(ws, found)] == [".forge.toml", ".mcp.json", "script.json"]
    assert [p.name for p in watched_files(ws, None)] == [".forge.toml", ".mcp.json"]
    # What an editor watching the server's globs reports itself, and what it misses.
    assert client_watches(ws / ".forge.toml", ws) and client_watches(ws / ".forge" / "agents" / "a.md", ws)
    assert not client_watches(ws / "script.json", ws)
    (ws / "real.toml").write_text("")
    link = ws / ".forge" / "templates" / "x.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(ws / "real.toml")
    assert not client_watches(link, ws)  # its target changing is no change of the link
