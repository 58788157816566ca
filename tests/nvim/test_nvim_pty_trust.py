"""Trust in a real terminal Neovim (tmux), on 0.7.2 and 0.11.4 (issues 34 and 35): the trust question never takes
keys meant for something else, trusting an open .forge.toml then saving an edit of it keeps the trust, and what
an editor's own trust store says never covers a pulled file it did not hash (the server's fingerprint decides).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_nvim import installed, neovims
from test_nvim_pty import ERRORS, MODEL, Screen, pty_marks, workspace

pytestmark = pty_marks(120)

VERSIONS = pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
QUESTION = "2: Not now"
"""The trust question on screen (its first line wraps where the terminal does)."""


def untrusted(tmp_path: Path, nvim: str) -> Screen:
    """A cloned workspace whose .forge.toml names a scripted model: the server asks whether to trust it."""
    ws, home = workspace(tmp_path, {"text": "Hello from the trusted script."}, forge_toml=MODEL, main="x = 1\n", trusted=False)
    return Screen(nvim, ws, home, user_model=False)  # only the workspace names a model


def evil(marker: Path) -> str:
    return json.dumps({"responses": [{"tool_calls": [{"name": "shell", "arguments": {"command": f"touch {marker}"}}]}]})


@VERSIONS
def test_the_trust_question_never_takes_a_typed_forge_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """The user types :ForgeTrust while the server's question comes: the keys are the command's, it trusts."""
    nvim = installed(flavour, nvim)
    s = untrusted(tmp_path, nvim)
    try:
        s.wait_for("x = 1")
        # Typing slowly from the start, as a person does, through the moment the server asks (seconds).
        s.keys("Escape")
        s.keys("-l", ":")
        deadline = time.monotonic() + 12
        for char in "ForgeTrus":
            s.keys("-l", char)
            shown = s.text()
            assert QUESTION not in shown, f"the question came over the command line:\n{shown}"
            time.sleep(max(0.0, (deadline - time.monotonic()) / 8))
        s.keys("-l", "t")
        s.keys("Enter")
        shown = s.wait_for(f"Forge: trusted {s.ws}")
        assert "left untrusted" not in shown, shown
        # Idle now, the question does not come any more: the workspace is trusted.
        time.sleep(3)
        assert QUESTION not in s.text()
        s.command("ForgeRun hello")
        s.wait_for("Forge: turn completed (1 request, 0 tool calls, 0 failures)")
        s.assert_clean()
    finally:
        s.close()


@VERSIONS
def test_forge_trust_typed_at_the_question_trusts(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """The question is on screen and the user types :ForgeTrust anyway: the command runs, and trusts (0.11's own
    numbered list ate the whole line as a wrong answer)."""
    nvim = installed(flavour, nvim)
    s = untrusted(tmp_path, nvim)
    try:
        s.wait_for(QUESTION)
        s.keys("-l", ":ForgeTrust")
        s.keys("Enter")
        shown = s.wait_for(f"Forge: trusted {s.ws}")
        assert "left untrusted" not in shown, shown
        s.command("ForgeRun hello")
        s.wait_for("Forge: turn completed (1 request, 0 tool calls, 0 failures)")
        s.assert_clean()
    finally:
        s.close()


@VERSIONS
def test_the_trust_question_waits_while_the_user_types(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """In insert mode the question waits; back in Normal mode and idle, it is asked (and answered "1": trusted)."""
    nvim = installed(flavour, nvim)
    s = untrusted(tmp_path, nvim)
    try:
        s.wait_for("x = 1")
        s.keys("G", "o")
        for _ in range(12):  # ~6 s of typing: the server has asked by then
            s.keys("-l", "ab")
            time.sleep(0.5)
            assert QUESTION not in s.text(), s.text()
        s.keys("Escape")
        s.wait_for(QUESTION, timeout=20)
        s.keys("1", "Enter")
        s.wait_for(f"Forge: trusted {s.ws}")
        assert "abababab" in s.text()  # what was typed went to the buffer, all of it
    finally:
        s.close()


@VERSIONS
def test_trusting_the_open_forge_toml_then_saving_an_edit_keeps_the_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 35: on 0.7.2, open .forge.toml in an untrusted workspace, :ForgeTrust, edit, :w asked again every time."""
    nvim = installed(flavour, nvim)
    s = untrusted(tmp_path, nvim)
    try:
        s.wait_for(QUESTION, timeout=40)
        s.keys("2", "Enter")  # Not now
        s.wait_for("Forge: workspace left untrusted")
        s.command("edit .forge.toml")
        s.wait_for('model = "scripted/script.json"')
        s.command("ForgeTrust")
        s.wait_for(f"Forge: trusted {s.ws}")
        for note in ("# my own note", "# and another"):
            s.keys("g", "g", "O")
            s.keys("-l", note)
            s.command("w")
            s.wait_for("written")
            time.sleep(3)  # the server's check of the files (2 s) and a watcher's event have come by now
            shown = s.text()
            assert QUESTION not in shown and "not trusted" not in shown, shown
        s.command("ForgeStatus")
        s.wait_for("scripted/script.json", fail_on=(*ERRORS, QUESTION))
        s.command("ForgeRun hello")
        s.wait_for("turn completed", fail_on=(*ERRORS, QUESTION, "not trusted"))
        assert (s.ws / ".forge.toml").read_text().startswith("# and another\n# my own note\n")
    finally:
        s.close()


def forge_lsp(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"XDG_STATE_HOME": str(home / "state"), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "forge_lsp", *args], capture_output=True, text=True, env=env, timeout=60)


def neovim_trusts(home: Path, file: Path) -> None:
    """Neovim's own trust store (vim.secure, 0.9+) lists file's content, as :ForgeTrust (or :trust) leaves it."""
    store = home / "state" / "nvim" / "trust"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(f"{hashlib.sha256(file.read_bytes()).hexdigest()} {file.resolve()}\n")


@VERSIONS
def test_a_pulled_mcp_json_does_not_run_under_trust_given_before(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 34's acceptance: :ForgeTrust (Neovim's store too), then a pull adds an .mcp.json whose server runs
    `touch X`; Neovim restarts and the user opens :ForgeMcp: nothing runs, the server asks again."""
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, forge_toml="max_requests_per_turn = 7\n", main="x = 1\n")  # trusted (:ForgeTrust)
    neovim_trusts(home, ws / ".forge.toml")
    marker = tmp_path / "pwned"
    (ws / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"helper": {"command": "/bin/sh", "args": ["-c", f"touch {marker}"]}}})
    )
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("Forge: idle")
        s.command("ForgeMcp")
        s.wait_for("helper  untrusted")
        time.sleep(1)
        assert not marker.exists(), "the pulled .mcp.json's server ran"
        s.keys("q")
        shown = s.wait_for(QUESTION, timeout=20)
        assert "its files changed since you trusted it" in "".join(shown.splitlines()), shown
    finally:
        s.close()
    assert not marker.exists()


@VERSIONS
def test_a_changed_script_does_not_play_after_a_revoke(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 34's acceptance: trusted (Neovim's store too), `forge-lsp trust DIR --revoke`, the script changes:
    :ForgeRun runs nothing."""
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, {"text": "harmless"}, forge_toml=MODEL, main="x = 1\n")
    neovim_trusts(home, ws / ".forge.toml")
    done = forge_lsp(home, "trust", str(ws), "--revoke")
    assert done.returncode == 0, done.stderr
    marker = tmp_path / "pwned"
    (ws / "script.json").write_text(evil(marker))
    s = Screen(nvim, ws, home, user_model=False)
    try:
        s.wait_for("Forge: idle")
        s.command("ForgeRun hello")
        s.wait_for("no model is set", fail_on=("E5108", "Error executing"))
        assert not marker.exists(), "the changed script played after --revoke"
    finally:
        s.close()
    assert not marker.exists()
