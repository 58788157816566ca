"""acpx (npm, a headless ACP client we did not write) drives `forge-lsp acp` on the scripted model, and
what a person sees in its output is checked. Installed by .ci/test (npm install --no-save in tests/agent_protocol/acpx);
skipped, saying why, where it is not installed, except under CI, where that fails."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_acp import agent_env, servers_cache, shell, workspace_with

from support import forkserver
from support.processes import left_running_in

pytestmark = pytest.mark.timeout(120)

ACPX = Path(__file__).parent / "acpx" / "node_modules" / ".bin" / "acpx"


def _strict() -> bool:
    return os.environ.get("CI", "") not in ("", "false", "0") or os.environ.get("FORGE_STRICT", "") not in ("", "0")


@pytest.fixture(scope="module")
def acpx() -> Path:
    if ACPX.exists() and shutil.which("node"):
        return ACPX
    why = "acpx is not installed: npm install --no-save in tests/agent_protocol/acpx (.ci/test does it when npm is there)"
    if _strict():
        pytest.fail(f"{why}; CI runs every test")
    pytest.skip(why)


def run_acpx(acpx: Path, workspace: Path, prompt: str, *options: str) -> subprocess.CompletedProcess[str]:
    home = workspace.parent / "acpx-home"  # acpx keeps its sessions and cache under HOME
    home.mkdir(exist_ok=True)
    agent = f"{shlex.quote(forkserver.python_for_editors())} -m forge_lsp acp"
    return subprocess.run(
        [str(acpx), "--agent", agent, "--cwd", str(workspace), *options, "exec", prompt],
        capture_output=True,
        text=True,
        timeout=90,
        env={**agent_env(), "HOME": str(home), "XDG_CACHE_HOME": servers_cache()},
    )


def test_a_turn_that_reads_and_writes_through_acpx_shows_no_error(acpx: Path, workspace: Path) -> None:
    (workspace / "notes.md").write_text("saved notes\n")
    read = {"tool_calls": [{"name": "read", "arguments": {"file_path": "notes.md"}}]}
    write = {"tool_calls": [{"name": "write", "arguments": {"file_path": "new.md", "content": "fresh\n"}}]}
    workspace_with(workspace, {"text": "Reading first.", **read}, write, {"text": "All written."})
    p = run_acpx(acpx, workspace, "write new.md", "--approve-all")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    # acpx offers fs/*: notes.md is read through it, new.md written through it (to the disk, acpx has no
    # buffers), and never asked about before it existed, so no "[error] ... Resource not found" line.
    assert "[error]" not in out and "Resource not found" not in out
    assert (workspace / "new.md").read_text() == "fresh\n"
    assert "saved notes" in out and "Reading first." in out and "All written." in out
    assert "[done] end_turn" in out


def test_deny_all_refuses_a_command_that_needs_the_users_yes(acpx: Path, workspace: Path) -> None:
    workspace_with(
        workspace, shell("echo deploy > deployed"), {"text": "Not deployed."}, toml='[tools.shell]\nconfirm = ["echo deploy*"]'
    )
    p = run_acpx(acpx, workspace, "deploy", "--deny-all")
    out = p.stdout + p.stderr
    assert p.returncode == 5, out  # acpx's exit code PERMISSION_DENIED: it denied a request
    assert not (workspace / "deployed").exists()
    assert "the user denied running this command" in out and "Not deployed." in out


def test_approve_all_runs_it(acpx: Path, workspace: Path) -> None:
    workspace_with(
        workspace, shell("echo deploy > deployed"), {"text": "Deployed."}, toml='[tools.shell]\nconfirm = ["echo deploy*"]'
    )
    p = run_acpx(acpx, workspace, "deploy", "--approve-all")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (workspace / "deployed").read_text() == "deploy\n" and "Deployed." in p.stdout


def test_a_prompt_with_no_model_says_why_and_ends(acpx: Path, workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n')  # untrusted: a script file is ignored
    p = run_acpx(acpx, workspace, "hi", "--approve-all")
    out = p.stdout + p.stderr
    assert "The prompt was not run: no model is set" in out and "forge-lsp trust" in out
    assert "[done] end_turn" in out and p.returncode == 0, out


def test_a_failed_call_is_shown_once_with_its_error_and_the_retry_notice(acpx: Path, workspace: Path) -> None:
    workspace_with(workspace, {"text": "Trying.", **shell("echo oops; exit 3")}, {"text": "Gave up."})
    p = run_acpx(acpx, workspace, "go", "--approve-all")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    # acpx prints a tool call each time its final state changes: one failed update, not the failure and
    # then the same call again with the retry notice added.
    assert out.count("[tool] `echo oops; exit 3` (failed)") == 1, out
    failed = out.split("(failed)", 1)[1].split("Gave up.", 1)[0]
    assert "command exited with code 3" in failed and "<stdout>oops</stdout>" in failed
    assert "Attempts remaining:** 2" in failed
    assert "attemptsLeft" not in out  # the attempts are said once, in the notice, not again as a JSON blob
    assert "[done] end_turn" in out


def test_mcp_servers_from_acpx_mcp_config_give_the_session_their_tools(acpx: Path, workspace: Path) -> None:
    """Issue 26: acpx --mcp-config passes its servers in session/new; forge-lsp starts them for the session,
    the model's call reaches mcp-server-time, and nothing is left running once acpx has exited."""
    call = {"tool_calls": [{"name": "mcp_time_get_current_time", "arguments": {"timezone": "UTC"}}]}
    workspace_with(workspace, {"text": "Asking the clock.", **call}, {"text": "It is time."})
    config = workspace.parent / "acpx-mcp.json"
    server = {"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"], "env": []}
    config.write_text(json.dumps({"mcpServers": [server]}))
    p = run_acpx(acpx, workspace, "what time is it?", "--approve-all", "--mcp-config", str(config))
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "mcp_time_get_current_time" in out and "(completed)" in out, out
    assert '"timezone": "UTC"' in out, out
    assert "It is time." in out and "[done] end_turn" in out, out
    assert left_running_in(workspace) == []


def test_a_slash_command_through_acpx_runs_the_command_and_shows_no_error(acpx: Path, workspace: Path) -> None:
    """acpx sends "/greet Ada" as the prompt's text (the available_commands_update comes with the session)."""
    folder = workspace / ".forge" / "commands"
    folder.mkdir(parents=True)
    (folder / "greet.md").write_text("---\ndescription: Greet someone\n---\nSay hello to {{args}} in French.\n")
    workspace_with(workspace, {"text": "Bonjour, Ada."})  # trusted after the command is written
    p = run_acpx(acpx, workspace, "/greet Ada")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "Bonjour, Ada." in out and "[error]" not in out, out
    (transcript,) = (workspace / ".forge" / "transcripts").glob("*.md")
    assert "## Prompt\n\nSay hello to Ada in French." in transcript.read_text()
