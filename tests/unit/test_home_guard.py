"""The guard of tests/conftest.py (_no_test_touched_the_users_home) sees a server that a test started without the
test's own XDG_* folders: it registered the test's workspace in the user's state folder (here a stand-in home)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.home_guard import mentions, user_folders


def run_without_the_tests_folders(home: Path, ws: Path, env: dict[str, str]) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    p = subprocess.run(
        [sys.executable, "-m", "forge_lsp", "run", "hello", "-w", str(ws), "--model", "scripted/echo"],
        capture_output=True,
        text=True,
        timeout=90,
        env={**clean, "HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env},
    )
    assert p.returncode == 0, p.stderr


def test_the_guard_names_the_users_file_that_a_careless_test_wrote(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    folders = user_folders({"HOME": str(home)})
    assert mentions(folders, [str(ws)]) == []
    run_without_the_tests_folders(home, ws, {})
    found = mentions(folders, [str(ws)])
    assert found == [f"{home}/.local/state/forge-lsp/states.json: {ws}"], found


def test_a_test_that_gives_its_server_its_own_folders_leaves_the_users_alone(tmp_path: Path) -> None:
    home, ws, own = tmp_path / "home", tmp_path / "ws", tmp_path / "own"
    home.mkdir()
    ws.mkdir()
    xdg = {name: str(own / name) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")}
    run_without_the_tests_folders(home, ws, xdg)
    assert mentions(user_folders({"HOME": str(home)}), [str(ws)]) == []
    assert mentions(user_folders({"HOME": str(home), **xdg}), [str(ws)])  # the run's own: there
