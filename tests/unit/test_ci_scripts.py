"""The README's two commands do all the set-up: .ci/test installs what the tests need, and says what it cannot."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STUB = """#!/bin/sh
# A python3 that has none of the test dependencies: records what .ci/test asks of it.
echo "$*" >> "$LOG"
case "$*" in
  "-c "*) exit 1 ;;
esac
exit 0
"""


def readme_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block is not None
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    install, test = readme_commands()[:2]
    assert install == "pip install -e . && forge-lsp demo"
    assert test == "bash .ci/test"
    commands = [line.split("#", 1)[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert [c for c in commands if c][-1] == test


NODE_STUB = """#!/bin/sh
# npm or node: records what .ci/test asks of it; `node scripts/guarded-test.mjs test-real/` (real VS Code) fails
# where $REAL_FAILS is set.
echo "$(basename "$0") $*" >> "$LOG"
case "$*" in
  *test-real/*) [ -n "$REAL_FAILS" ] && exit 1 ;;
esac
exit 0
"""


def _run_ci_test(
    tmp_path: Path, ci: str | None, *args: str, llama_built: bool = False, node: bool = False, real_fails: bool = False
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """.ci/test in a copy of the repo's scripts, with a python3 lacking pytest and no npm, nvim or tmux on PATH
    (llama_built: a tests/llama_server/install.sh whose --check says llama-server is built; node: npm and node that
    pass every test, but real VS Code's where real_fails)."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "test", repo / ".ci" / "test")
    if llama_built:
        (repo / "tests" / "llama_server").mkdir(parents=True)
        (repo / "tests" / "llama_server" / "install.sh").write_text('[ "$1" = --check ] && exit 0\nexit 1\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STUB)
    (bin_dir / "python3").chmod(0o755)
    if node:
        for folder in ("editors/vscode", "tests/agent_protocol/node", "tests/agent_protocol/acpx", "tests/mcp/node"):
            (repo / folder / "node_modules").mkdir(parents=True)
        (repo / "editors" / "vscode" / "test-real").mkdir()
        (repo / "editors" / "vscode" / "test-real" / "install.sh").write_text("exit 0\n")
        for tool in ("npm", "node"):
            (bin_dir / tool).write_text(NODE_STUB)
            (bin_dir / tool).chmod(0o755)
        for tool in ("basename",):
            (bin_dir / tool).symlink_to(shutil.which(tool) or "")
    for tool in ("bash", "dirname", "mktemp", "cat", "rm", "nice"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    log = tmp_path / "log"
    env = {"PATH": str(bin_dir), "LOG": str(log), "HOME": str(tmp_path), "REAL_FAILS": "1" if real_fails else ""}
    if ci is not None:
        env["CI"] = ci
    if node:
        env["FORGE_VSCODE_REAL"] = "1"
    bash = shutil.which("bash")
    assert bash
    p = subprocess.run([bash, str(repo / ".ci" / "test"), *args], capture_output=True, text=True, timeout=30, env=env)
    return p, log.read_text().splitlines() if log.exists() else []


def test_fresh_venv_gets_the_dev_extra_and_names_what_is_missing(tmp_path: Path) -> None:
    p, calls = _run_ci_test(tmp_path, None)
    assert p.returncode == 0, p.stderr
    assert "-m pip install -q -e .[dev]" in calls
    # Every test in parallel, then the llama-server tier alone (its build has the whole run to finish).
    assert calls[-2:] == [
        "-m pytest -q -n 4 --dist worksteal tests --ignore=tests/llama_server",
        "-m pytest -q -p no:xdist tests/llama_server",
    ]
    assert "MISSING node 20+ and npm" in p.stderr
    assert "tmux" in p.stderr


def test_a_built_llama_server_tier_runs_before_the_python_suite_beside_real_vscode(tmp_path: Path) -> None:
    p, calls = _run_ci_test(tmp_path, None, llama_built=True)
    assert p.returncode == 0, p.stderr
    pytests = [c for c in calls if c.startswith("-m pytest")]
    assert pytests == [
        "-m pytest -q --collect-only -p no:xdist -p no:cacheprovider tests",  # the test modules' bytecode, once
        "-m pytest -q -p no:xdist tests/llama_server",
        "-m pytest -q -n 4 --dist worksteal tests --ignore=tests/llama_server",
    ]
    assert "beside real VS Code" in p.stderr and "the llama-server tier done at" in p.stderr


def test_a_failing_real_vscode_test_fails_the_run_after_what_ran_beside_it(tmp_path: Path) -> None:
    p, calls = _run_ci_test(tmp_path, None, llama_built=True, node=True, real_fails=True)
    assert p.returncode == 1, p.stderr
    real = calls.index("node scripts/guarded-test.mjs test-real/")
    assert calls.index("npm test") < real  # the extension's own tests first
    assert "-m pytest -q -p no:xdist tests/llama_server" in calls  # beside it: waited for, then shown
    assert "beside real VS Code" in p.stderr and "the llama-server tier done at" in p.stderr
    assert not any(c.startswith("-m pytest -q -n") for c in calls)  # the Python suite never starts
    p, calls = _run_ci_test(tmp_path / "passing", None, llama_built=True, node=True)
    assert p.returncode == 0, p.stderr
    assert calls[-1] == "-m pytest -q -n 4 --dist worksteal tests --ignore=tests/llama_server"


def test_under_ci_nothing_may_be_missing(tmp_path: Path) -> None:
    p, calls = _run_ci_test(tmp_path, "true")
    assert p.returncode == 1
    assert "MISSING node 20+ and npm" in p.stderr and "CI runs every test" in p.stderr
    assert not any(c.startswith("-m pytest") for c in calls)


def test_the_fast_tier_runs_the_unit_and_property_tests_and_one_smoke_test_per_frontend(tmp_path: Path) -> None:
    p, calls = _run_ci_test(tmp_path, None, "--fast")
    assert p.returncode == 0, p.stderr
    assert "-m pip install -q -e .[dev]" in calls
    run = calls[-1].split()
    assert run[:5] == ["-m", "pytest", "-q", "-n", "4"]
    assert {"tests/unit", "tests/trust/test_trust_store.py", "tests/reliability/test_fuzz.py"} <= set(run)
    smoke = [a for a in run if "::" in a]
    assert [a.split("/")[1] for a in smoke] == ["e2e", "agent_protocol", "cli"]  # the LSP, ACP and CLI frontends
    for test in smoke:  # each names a test that exists
        path, name = test.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(), test
    assert "MISSING" not in p.stderr  # no editor, node or Neovim needed
