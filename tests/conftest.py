"""Shared fixtures: no network, no user config from the machine."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from support import reliability

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    # The user's state folder (trust decisions live there): never the machine's own.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    monkeypatch.delenv("FORGE_LSP_CONFIG", raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def record_reliability() -> Callable[[str, str, str], None]:
    """Records a row for RELIABILITY.md (any suite may use it)."""
    return reliability.record
