"""[verify]: the keys of issue 37 section 1, and what a workspace may do with them (tighten, never loosen)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.config import ConfigLoader


def loader(root: Path, user: str | None = None) -> ConfigLoader:
    user_path = root.parent / "user.toml"
    if user is not None:
        user_path.write_text(user)
    return ConfigLoader(root, user_path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_the_defaults_report_errors_within_two_seconds(workspace: Path) -> None:
    verify = loader(workspace).load().config.verify
    assert (verify.diagnostics, verify.severity, verify.wait_ms) == ("report", "error", 2000)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_workspace_may_tighten_diagnostics_and_severity_never_loosen_them(
    workspace: Path, trusted: bool, record_reliability: Callable[[str, str, str], None]
) -> None:
    (workspace / ".forge.toml").write_text('[verify]\ndiagnostics = "fail"\nseverity = "warning"\n')
    eff = loader(workspace).load(trusted=trusted)
    assert (eff.config.verify.diagnostics, eff.config.verify.severity) == ("fail", "warning") and not eff.problems
    (workspace / ".forge.toml").write_text('[verify]\ndiagnostics = "off"\nseverity = "error"\n')
    eff = loader(workspace, '[verify]\ndiagnostics = "fail"\nseverity = "warning"\n').load(trusted=trusted)
    assert (eff.config.verify.diagnostics, eff.config.verify.severity) == ("fail", "warning")
    assert eff.sources["verify.diagnostics"] == "user"
    off, error = sorted(eff.problems, key=lambda p: p.key)
    assert (off.key, off.line) == ("verify.diagnostics", 2)
    assert "'off' would loosen your 'fail'; a workspace may only tighten it" in off.message
    assert (error.key, error.line) == ("verify.severity", 3)
    if not trusted:
        record_reliability(
            "attack: a cloned repository turns off the check of the agent's edits against the editor's diagnostics",
            '.forge.toml: [verify] diagnostics = "off", severity = "error" where the user set "fail" and "warning"',
            'both ignored and reported at their lines; the user\'s "fail" and "warning" stay, trusted or not',
        )
    # "report" where the default is: no tighter, no looser.
    (workspace.parent / "user.toml").unlink()
    (workspace / ".forge.toml").write_text('[verify]\ndiagnostics = "report"\n')
    eff = loader(workspace).load(trusted=trusted)
    assert eff.config.verify.diagnostics == "report" and not eff.problems


def test_an_untrusted_workspace_may_wait_longer_not_shorter(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("[verify]\nwait_ms = 500\n")
    eff = loader(workspace).load(trusted=False)
    assert eff.config.verify.wait_ms == 2000
    (problem,) = eff.problems
    assert problem.key == "verify.wait_ms" and "would loosen your limit" in problem.message
    assert loader(workspace).load(trusted=True).config.verify.wait_ms == 500
    (workspace / ".forge.toml").write_text("[verify]\nwait_ms = 5000\n")
    assert loader(workspace).load(trusted=False).config.verify.wait_ms == 5000


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('diagnostics = "strict"', "expected one of 'off', 'report', 'fail', got 'strict'"),
        ('severity = "hint"', "expected one of 'error', 'warning', got 'hint'"),
        ("wait_ms = 600000", "must be <= 60000, got 600000"),
        ("wait_ms = -1", "must be >= 0, got -1"),
        ("wait = 10", "unknown key (did you mean verify.wait_ms?)"),
    ],
)
def test_a_bad_value_or_a_typo_is_dropped_alone_and_said_at_its_line(workspace: Path, line: str, message: str) -> None:
    (workspace / ".forge.toml").write_text(f"max_requests_per_turn = 7\n[verify]\n{line}\n")
    eff = loader(workspace).load(trusted=True)
    (problem,) = eff.problems
    assert message in problem.message and problem.line == 3
    assert eff.config.max_requests_per_turn == 7 and eff.config.verify.wait_ms == 2000
