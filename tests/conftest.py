"""Shared fixtures: no network, no user config from the machine."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support import home_guard, reliability

# The user's own forge-lsp folders, as the environment names them before the run replaces XDG_*: read after the
# run for this run's paths (_no_test_touched_the_users_home).
_USER_FOLDERS = home_guard.user_folders(os.environ)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# Every server the suite starts serves the scripted model without litellm (seconds of CPU per server saved) and
# warms nothing up; the tests of the model path itself ask for litellm's path with LITELLM_PATH.
os.environ.setdefault("FORGE_LSP_SCRIPTED", "direct")
# Before any test module copies os.environ for the servers it starts (the e2e fixtures, the CLI
# tests): a user config and a trust store of the run's own, never the machine user's. Each test
# gets its own as well (the autouse fixture below) for what runs in-process.
_ISOLATED = tempfile.mkdtemp(prefix="forge-tests-home-")
atexit.register(shutil.rmtree, _ISOLATED, True)
os.environ["XDG_CONFIG_HOME"] = os.path.join(_ISOLATED, "config")
os.environ["XDG_STATE_HOME"] = os.path.join(_ISOLATED, "state")
os.environ.pop("FORGE_LSP_CONFIG", None)
# FORGE_HYPOTHESIS_EXAMPLES=2000 runs every property suite longer, once, to shake out other seeds.
settings.register_profile("forge", max_examples=int(os.environ.get("FORGE_HYPOTHESIS_EXAMPLES", "100")))
settings.load_profile("forge")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reliability-report",
        metavar="PATH",
        default=None,
        help="write the reliability rows of a passing run to PATH (e.g. RELIABILITY.md); off by default",
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Only on request: a plain test run never rewrites a tracked file.
    path = session.config.getoption("--reliability-report")
    if not path:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its rows go to the controller, which writes the report
        workeroutput["reliability_rows"] = [list(row) for row in reliability.ROWS]
        return
    if exitstatus != 0:
        print(f"\nreliability report not written: the run did not pass (exit {exitstatus}); {path} is unchanged")
        return
    Path(path).write_text(reliability.render_report(reliability.ROWS), encoding="utf-8")
    print(f"\nreliability report: {len(set(reliability.ROWS))} rows written to {path}")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist: a worker's reliability rows join the controller's."""
    rows = getattr(node, "workeroutput", {}).get("reliability_rows", [])
    reliability.ROWS.extend(tuple(row) for row in rows)  # type: ignore[misc]


@pytest.fixture(scope="session", autouse=True)
def _no_test_touched_the_users_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests never touch the user's home: after the run, no file of the user's forge-lsp folders names a folder of
    this run (a server started without the run's XDG_* registers its workspaces in ~/.local/state/forge-lsp)."""
    marks = [str(tmp_path_factory.getbasetemp()), _ISOLATED]
    before = set(home_guard.mentions(_USER_FOLDERS, marks))
    yield
    touched = sorted(set(home_guard.mentions(_USER_FOLDERS, marks)) - before)
    assert not touched, "a test wrote into the user's forge-lsp folders (give its server the test's XDG_*): " + "; ".join(touched)


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
