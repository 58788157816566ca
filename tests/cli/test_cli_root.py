"""Which workspace a forge-lsp command means without --workspace: the root above the current folder, found as git
finds its repository (.forge.toml first, then .git), and said when it is not the current folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import forkserver


def forge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # os.environ as it is now: the test's own user config and state folders (tests/conftest.py).
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([*forkserver.command(), *args], capture_output=True, text=True, timeout=90, env=env, cwd=cwd)


def test_run_in_a_subfolder_uses_the_workspace_of_the_forge_toml_above(tmp_path: Path) -> None:
    root = tmp_path / "app"
    sub = root / "src" / "pkg"
    sub.mkdir(parents=True)
    (root / ".forge.toml").write_text("max_requests_per_turn = 5\n")
    p = forge("run", "hello", "--model", "scripted/echo", cwd=sub)
    assert p.returncode == 0, p.stderr
    assert not (sub / ".forge").exists() and not (root / "src" / ".forge").exists()
    assert list((root / ".forge" / "transcripts").glob("*.md"))
    said = [line for line in p.stderr.splitlines() if str(root) in line]
    assert len(said) == 1 and ".forge.toml" in said[0], p.stderr
    # the same conversation, listed from another subfolder
    listed = forge("conversations", cwd=root / "src")
    assert listed.returncode == 0 and "hello" in listed.stdout, listed.stdout + listed.stderr


def test_forge_toml_wins_over_a_nearer_git(tmp_path: Path) -> None:
    root = tmp_path / "app"
    sub = root / "vendored"
    (sub / ".git").mkdir(parents=True)
    (root / ".forge.toml").write_text("")
    p = forge("trust", "--status", cwd=sub)
    assert p.stdout.startswith(f"{root}: not trusted"), p.stdout + p.stderr


def test_without_a_forge_toml_the_git_root_is_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "lib").mkdir()
    p = forge("trust", cwd=root / "lib")
    assert p.returncode == 0 and p.stdout.startswith(f"{root}: trusted"), p.stdout + p.stderr
    assert "(its .git is above this folder" in p.stderr


def test_at_the_root_nothing_is_said(tmp_path: Path) -> None:
    (tmp_path / ".forge.toml").write_text("")
    p = forge("run", "hello", "--model", "scripted/echo", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert str(tmp_path) not in p.stderr and (tmp_path / ".forge").is_dir()


def test_workspace_given_is_used_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "app"
    sub = root / "sub"
    sub.mkdir(parents=True)
    (root / ".forge.toml").write_text("")
    p = forge("run", "hello", "--model", "scripted/echo", "-w", ".", cwd=sub)
    assert p.returncode == 0, p.stderr
    assert (sub / ".forge").is_dir() and not (root / ".forge").exists()
    assert str(root) not in p.stderr


def test_a_marker_that_is_not_yours_is_not_a_root(tmp_path: Path) -> None:
    """A .forge.toml someone else left in a shared folder above (/tmp) does not make that folder the workspace."""
    if os.getuid() != 0:
        pytest.skip("only root can give a file another owner")
    root = tmp_path / "shared"
    sub = root / "mine"
    sub.mkdir(parents=True)
    (root / ".forge.toml").write_text("")
    os.chown(root / ".forge.toml", 12345, 12345)
    p = forge("trust", "--status", cwd=sub)
    assert p.stdout.startswith(f"{sub}: not trusted"), p.stdout + p.stderr
