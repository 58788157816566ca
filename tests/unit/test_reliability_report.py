"""RELIABILITY.md is written only by the explicit command; a plain test run leaves it as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.reliability import render_report

TESTS = Path(__file__).resolve().parents[1]

TINY = """
def test_records(record_reliability):
    assert 1 + 1 == 2
    record_reliability("fault: one plus one", "1 + 1", "2")
    record_reliability("attack: hostile .forge.toml", "api_base to a remote host", "ignored; reported at its line")
"""


def _tree(tmp_path: Path) -> Path:
    """A copy of the suite's own conftest and support package, with one tiny test in tests/reliability/."""
    root = tmp_path / "repo"
    (root / "tests" / "reliability").mkdir(parents=True)
    shutil.copy(TESTS / "conftest.py", root / "tests" / "conftest.py")
    shutil.copytree(TESTS / "support", root / "tests" / "support", ignore=shutil.ignore_patterns("__pycache__"))
    for extra in TESTS.glob("reliability/conftest.py"):  # an old-style report writer, if there is one
        shutil.copy(extra, root / "tests" / "reliability" / "conftest.py")
    (root / "tests" / "reliability" / "test_tiny.py").write_text(TINY)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (root / "RELIABILITY.md").write_text("the tracked report\n")
    return root


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "tests"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_a_plain_run_leaves_reliability_md_untouched(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    p = _pytest(root, "tests")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (root / "RELIABILITY.md").read_text() == "the tracked report\n"


def test_the_explicit_option_writes_both_tables(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    p = _pytest(root, "tests", "--reliability-report", "RELIABILITY.md")
    assert p.returncode == 0, p.stdout + p.stderr
    report = (root / "RELIABILITY.md").read_text()
    assert "| fault: one plus one | 1 + 1 | 2 |" in report
    security = report.split("## Security", 1)[1]
    assert "| hostile .forge.toml | api_base to a remote host | ignored; reported at its line |" in security
    assert "fault: one plus one" not in security


def test_render_report_escapes_cells_and_splits_attacks() -> None:
    text = render_report([("attack: a|b", "x\ny", "z"), ("plain", "t", "s"), ("plain", "t", "s")], date="2026-01-01")
    assert "| a\\|b | x y | z |" in text.split("## Security", 1)[1]
    assert text.count("| plain | t | s |") == 1  # the same row recorded twice (parametrized reruns) is one row
    assert "2026-01-01" in text
