"""forge-lsp run / demo as a user runs them: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from support import forkserver
from support.processes import ctrl_c_as_in_a_terminal
from support.trust import trust_workspace

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def forge(
    *args: str, cwd: Path | None = None, timeout: int = 90, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    # os.environ as it is now: the test's own user config and trust store (tests/conftest.py).
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    return subprocess.run(
        [*forkserver.command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        input=input,
    )


def write_script(root: Path, *responses: object) -> None:
    (root / "script.json").write_text(json.dumps({"responses": list(responses)}))
    (root / ".forge.toml").write_text('model = "scripted/script.json"\n[retry]\nmin_delay_ms = 1\n')
    trust_workspace(root)  # as the user would (forge-lsp trust DIR), so its scripted model applies


def test_run_completed_exits_0(workspace: Path) -> None:
    write_script(
        workspace,
        {"tool_calls": [{"name": "write", "arguments": {"file_path": "hi.txt", "content": "hi\n"}}]},
        {"text": "Wrote it."},
    )
    p = forge("run", "write hi.txt", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    assert "→ write: hi.txt" in p.stdout and "■ turn completed" in p.stdout and "Wrote it." in p.stdout
    assert (workspace / "hi.txt").read_text() == "hi\n"


def test_the_answer_is_printed_once(workspace: Path) -> None:
    write_script(workspace, {"text": "Wrote it."})
    p = forge("run", "say it", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("Wrote it.") == 1, p.stdout


def test_reasoning_is_one_thinking_line_before_its_reply(workspace: Path) -> None:
    long = " ".join(["ponder"] * 100)
    write_script(
        workspace,
        {"reasoning": "Read it first.", "text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"file_path": "a"}}]},
        {"reasoning": long, "text": "Done."},
    )
    (workspace / "a").write_text("x\n")
    p = forge("run", "go", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    first = lines.index("  thinking: Read it first.")
    assert first < lines.index("  assistant: Reading.") < lines.index("  → read: a")
    (cut,) = [line for line in lines if line.startswith("  thinking: ponder")]
    assert cut.endswith("… (699 characters, whole in the transcript)") and len(cut) < 400, cut
    assert lines.index(cut) < next(i for i, line in enumerate(lines) if "Done." in line)


def test_a_command_that_needs_a_yes_says_nobody_could_be_asked(workspace: Path) -> None:
    write_script(workspace, {"tool_calls": [{"name": "shell", "arguments": {"command": "echo deployed"}}]}, {"text": "ok"})
    with (workspace / ".forge.toml").open("a") as f:
        f.write('[tools.shell]\nconfirm = ["echo *"]\n')
    trust_workspace(workspace)
    p = forge("run", "deploy", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    assert "nobody can be asked here" in p.stdout and "confirm pattern 'echo *'" in p.stdout, p.stdout
    assert f"set at {workspace / '.forge.toml'}:5" in p.stdout, p.stdout  # where the rule is, to change it
    assert "asks only in a terminal" in p.stdout, p.stdout
    assert "the user denied" not in p.stdout and "<stdout>deployed" not in p.stdout


def test_run_interrupted_exits_3(workspace: Path) -> None:
    fail = {"tool_calls": [{"name": "shell", "arguments": {"command": "false"}}]}
    write_script(workspace, fail, fail, fail)
    p = forge("run", "fail", "-w", str(workspace))
    assert p.returncode == 3, p.stderr
    assert "Attempts remaining:** 2" in p.stdout and "Attempts remaining:** 1" in p.stdout
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {shell: 3}}" in p.stdout
    (transcript,) = (workspace / ".forge" / "transcripts").glob("*.md")
    assert "## Interrupted: MaxToolFailurePerTurnLimitReached" in transcript.read_text()


def test_a_failed_command_is_told_with_the_error_it_printed(workspace: Path) -> None:
    """The ✗ line names what a failed command said (a newcomer saw only "exited with code 1": the assertion was in
    the transcript, whose path the run does not print); the model is given all of it."""
    (workspace / "test_x.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(-1, 5)\n"
    )
    write_script(
        workspace,
        *(
            {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}
            for command in ("cat nope.cfg", "python3 -m unittest -q test_x", "echo only out; exit 3", "exit 4")
        ),
        {"text": "ok"},
    )
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\nmax_tool_failure_per_turn = 9\n')
    trust_workspace(workspace)
    p = forge("run", "test it", "--workspace", str(workspace))
    failed = [line for line in p.stdout.splitlines() if line.startswith("  ✗ shell failed")]
    assert failed == [
        "  ✗ shell failed: command exited with code 1 (stderr: cat: nope.cfg: No such file or directory)",
        "  ✗ shell failed: command exited with code 1 (stderr: AssertionError: -1 != 5)",  # not "FAILED (failures=1)"
        "  ✗ shell failed: command exited with code 3 (stdout: only out)",
        "  ✗ shell failed: command exited with code 4",  # it printed nothing
    ], p.stdout + p.stderr


def test_run_failed_exits_1(workspace: Path) -> None:
    write_script(workspace, {"error": {"status": 401, "message": "bad key"}})
    p = forge("run", "x", "-w", str(workspace))
    assert p.returncode == 1
    assert "bad key" in p.stdout


def test_run_model_flag_overrides_config(workspace: Path) -> None:
    p = forge("run", "hello", "-w", str(workspace), "--model", "scripted/echo")
    assert p.returncode == 0 and "Hello from the scripted model." in p.stdout


def test_what_a_run_leaves_in_forge_stays_out_of_git_and_the_users_files_do_not(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".forge" / "templates").mkdir(parents=True)
    (workspace / ".forge" / "templates" / "forge-doom-loop-reminder.md").write_text("stop repeating yourself\n")
    p = forge("run", "hello", "-w", str(workspace), "--model", "scripted/echo")
    assert p.returncode == 0, p.stderr
    assert list((workspace / ".forge" / "transcripts").glob("*.md")) and (workspace / ".forge" / "state.sqlite3").exists()
    status = subprocess.run(
        ["git", "-C", str(workspace), "status", "--porcelain", "-uall"], capture_output=True, text=True, check=True
    )
    assert sorted(status.stdout.splitlines()) == ["?? .forge/.gitignore", "?? .forge/templates/forge-doom-loop-reminder.md"]


@pytest.mark.parametrize("mode", [["--in-process"], []])
def test_demo_shows_retries_recovery_and_interrupt(tmp_path: Path, mode: list[str]) -> None:
    # The README's main job as a user runs it: the scripted model through litellm's path.
    p = forge("demo", "--workspace", str(tmp_path), *mode, timeout=120, env={"FORGE_LSP_SCRIPTED": "litellm"})
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    notices = [line.strip() for line in out.splitlines() if "Attempts remaining" in line]
    assert notices[:2] == ["- **Attempts remaining:** 2", "- **Attempts remaining:** 1"]
    assert "model request failed (HTTP 429" in out
    assert out.index("✓ shell ok") > out.index("- **Attempts remaining:** 1")  # the recovery
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {patch: 3}}" in out
    assert "{'" not in out  # no Python dict repr anywhere a person reads it
    assert "■ turn interrupted" in out
    assert out.rstrip().endswith("your editor's lines, `forge-lsp --print-editor-config`"), out[-400:]  # what next


@pytest.mark.parametrize("mode", [["--in-process"], []])
def test_demo_never_overwrites_a_file(workspace: Path, mode: list[str]) -> None:
    (workspace / "README.md").write_text("my own readme\n")
    (workspace / "app.cfg").write_text("my own config\n")
    (workspace / "notes.txt").write_text("mine\n")
    p = forge("demo", "-w", str(workspace), *mode)
    assert p.returncode == 1, p.stdout + p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("forge-lsp: ") and "not empty" in line, line
    assert "README.md" in line and "app.cfg" in line and "notes.txt" in line, line
    assert p.stdout == "" and "Traceback" not in p.stderr
    assert (workspace / "README.md").read_text() == "my own readme\n"
    assert (workspace / "app.cfg").read_text() == "my own config\n"
    assert sorted(f.name for f in workspace.iterdir()) == ["README.md", "app.cfg", "notes.txt"]


def test_demo_makes_a_new_folder(tmp_path: Path) -> None:
    p = forge("demo", "-w", str(tmp_path / "new" / "demo"), "--in-process", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "new" / "demo" / "app.cfg").is_file()


def test_run_without_any_model_fails_at_once_saying_where_to_set_one(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text("max_tool_failure_per_turn = 2\n")
    p = forge("run", "hello", "-w", str(workspace))
    assert p.returncode == 1, p.stderr  # exit 1: the turn could not start (docs/cli.md)
    assert "no model is set" in p.stderr and ".forge.toml" in p.stderr
    assert "config.toml" in p.stderr and "--model MODEL on the command line" in p.stderr
    assert "forge.model" not in p.stderr  # an editor's setting: nothing the command line has
    assert p.stderr.count("--model") == 1, p.stderr  # named once, not again as ", or pass --model"
    assert "Traceback" not in p.stderr and not (workspace / ".forge" / "transcripts").exists()


def test_a_turn_refused_at_once_leaves_a_plain_git_repository_as_it_was(workspace: Path) -> None:
    """No model: the turn never starts, so nothing is stored, and `git status` shows nothing new (it showed an
    untracked .forge/ with its .gitignore)."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(workspace), "add", "app.py"], check=True)
    p = forge("run", "hello", cwd=workspace)
    assert p.returncode == 1 and "no model is set" in p.stderr, p.stderr
    assert not (workspace / ".forge").exists()
    status = subprocess.run(["git", "-C", str(workspace), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == "A  app.py\n", status.stdout


def test_no_model_says_what_this_workspace_needs(workspace: Path, tmp_path: Path) -> None:
    """Untrusted: how to trust it from here (not an editor's command); cannot be trusted: not 'trust it';
    a .forge.toml that does not parse: that, not 'add model = ...' to a file that has one."""
    (workspace / "s.json").write_text('{"responses": [{"text": "hi"}]}')
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    p = forge("run", "hello", "-w", str(workspace))
    assert p.returncode == 1 and f"trust it (forge-lsp trust {workspace}, or run --trust)" in p.stderr, p.stderr
    assert ":ForgeTrust" not in p.stderr and "Forge: Trust Workspace" not in p.stderr, p.stderr
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"responses": []}')
    (workspace / "s.json").unlink()
    (workspace / "s.json").symlink_to(outside)
    p = forge("run", "hello", "-w", str(workspace))
    assert p.returncode == 1 and "it cannot be trusted as it is (s.json is a link outside the workspace" in p.stderr
    assert "trust it (" not in p.stderr, p.stderr
    (workspace / ".forge.toml").write_text('model = "scripted/echo"\n[tools.shell\n')
    p = forge("run", "hello", "-w", str(workspace))
    assert p.returncode == 1 and ".forge.toml does not parse, so nothing in it applies" in p.stderr, p.stderr
    assert "add model =" not in p.stderr, p.stderr


def test_run_dash_reads_the_prompt_from_stdin(workspace: Path) -> None:
    prompt = "Fix the failing test.\nIt is in tests/test_parser.py.\n"
    p = forge("run", "-", "-w", str(workspace), "-m", "scripted/echo", input=prompt)
    assert p.returncode == 0, p.stderr
    assert "  prompt: Fix the failing test.\n          It is in tests/test_parser.py." in p.stdout, p.stdout
    assert "prompt: -" not in p.stdout
    (transcript,) = (workspace / ".forge" / "transcripts").glob("*.md")
    assert "It is in tests/test_parser.py." in transcript.read_text()
    empty = forge("run", "-", "-w", str(workspace), "-m", "scripted/echo", input="  \n")
    assert empty.returncode == 1 and "the prompt on stdin is empty" in empty.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_works_before_or_after_the_subcommand(workspace: Path, where: str) -> None:
    run = ["run", "hello", "-w", str(workspace), "-m", "scripted/echo"]
    log = workspace.parent / "forge.log"
    common = ["-v", "--log-file", str(log)]
    p = forge(*(common + run if where == "before" else run + common))
    assert p.returncode == 0, p.stderr
    assert " INFO " in log.read_text() and "; timing: totalMs" in log.read_text()


def test_a_revoked_workspace_is_said_to_be_revoked(workspace: Path) -> None:
    """As `trust --status` says it, and as a workspace whose files changed is told (a newcomer's report)."""
    (workspace / ".forge.toml").write_text('api_base = "http://127.0.0.1:9/v1"\n')
    assert forge("trust", str(workspace)).returncode == 0
    assert forge("trust", str(workspace), "--revoke").returncode == 0
    p = forge("run", "hello", "-w", str(workspace), "-m", "scripted/echo")
    assert p.returncode == 0, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"forge-lsp: {workspace} is not trusted (you revoked its trust), so"), line
    assert f"`forge-lsp trust {workspace}` trusts it" in line, line


def test_an_untrusted_workspace_is_said_once_and_only_what_matters(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\napi_base = "http://127.0.0.1:9/v1"\n')
    p = forge("run", "hello", "-w", str(workspace), "-m", "scripted/echo")
    assert p.returncode == 0, p.stderr
    (line,) = p.stderr.strip().splitlines()  # one line, not a line per key and a line about trust
    assert line.startswith(f"forge-lsp: {workspace} is not trusted") and "forge-lsp trust" in line and "--trust" in line
    assert ".forge.toml:2 api_base" in line and "model" not in line, line  # --model made the workspace's model moot
    (workspace / ".forge.toml").write_text('model = "scripted/s.json"\n')
    p = forge("run", "hello", "-w", str(workspace), "-m", "scripted/echo")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = forge("run", "hello", "-w", str(workspace))  # without --model, the ignored model is why no model is set
    assert p.returncode == 1 and ".forge.toml:1 model" in p.stderr and "no model is set" in p.stderr, p.stderr
    p = forge("run", "hello", "-w", str(workspace), "-c", "nope")  # an unrelated mistake comes alone
    (line,) = p.stderr.strip().splitlines()
    assert p.returncode == 1 and line.startswith("forge-lsp: no conversation 'nope'"), p.stderr
    p = forge("run", "/nope", "-w", str(workspace))  # so does an unknown /command (docs/cli.md)
    (line,) = p.stderr.strip().splitlines()
    assert p.returncode == 1 and line.startswith("forge-lsp: unknown command /nope; the commands are "), p.stderr
    assert p.stdout == "", p.stdout  # no turn started


def test_a_turn_of_several_messages_prints_each_once_and_ends_with_its_last_line(workspace: Path) -> None:
    read = [{"name": "read", "arguments": {"file_path": "x"}}]
    write_script(workspace, {"text": "First look.", "tool_calls": read}, {"text": "Second look.", "tool_calls": read})
    config = workspace / ".forge.toml"
    config.write_text("max_requests_per_turn = 2\n" + config.read_text())  # before write_script's [retry] table
    trust_workspace(workspace)
    (workspace / "x").write_text("x\n")
    p = forge("run", "look", "-w", str(workspace))
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stdout.count("First look.") == 1 and p.stdout.count("Second look.") == 1, p.stdout
    assert p.stdout.splitlines()[-1].startswith("■ turn interrupted"), p.stdout
    assert "MaxRequestPerTurnLimitReached {limit: 2}" in p.stdout
    assert p.stderr == ""  # no log line saying again what the interrupt line says


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", ""], "the prompt is empty"),
        (["run", "   "], "the prompt is empty"),
        (["run"], "required: prompt"),
        (["run", "x", "-w", "no-such-folder"], "workspace no-such-folder does not exist"),
        (["run", "x", "--model", " "], "--model is empty"),
        (["run", "x", "-w", "file.txt"], "is not a folder"),
        (["--tcp", "127.0.0.1", "port"], "--tcp port must be a number"),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["--log-file", "missing/dir/log.txt", "run", "x"], "No such file or directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "file.txt").write_text("")
    p = forge(*args, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("forge-lsp: ") and says in line


def test_failed_turn_counts_the_request_it_made(workspace: Path) -> None:
    write_script(workspace, {"error": {"status": 401, "message": "bad key"}})
    p = forge("run", "x", "-w", str(workspace))
    assert p.returncode == 1
    assert "■ turn failed: 1 request, 0 tool calls, 0 failures" in p.stdout
    assert "0 completion tokens, cost unknown" in p.stdout and "$0" not in p.stdout, p.stdout  # no reply, nothing known


def test_a_missing_script_file_is_named_and_no_request_was_sent(workspace: Path) -> None:
    p = forge("run", "x", "-w", str(workspace), "--model", "scripted/nope.json")
    assert p.returncode == 1
    assert "■ turn failed: 0 requests" in p.stdout and "cost unknown" in p.stdout, p.stdout
    assert f"the script file {workspace.resolve() / 'nope.json'} does not exist" in p.stdout, p.stdout
    assert "HTTP 400" not in p.stdout and "rejected" not in p.stdout and "scripted//" not in p.stdout, p.stdout


def test_a_model_name_litellm_cannot_route_sent_nothing_and_says_so(workspace: Path) -> None:
    """--model nonsense: litellm refuses it before any request (its 400 is its own): no "HTTP 400", no request."""
    p = forge("run", "x", "-w", str(workspace), "--model", "nonsense")
    assert p.returncode == 1
    assert "■ turn failed: 0 requests" in p.stdout, p.stdout
    assert "unknown model nonsense: litellm knows no provider for it; name it provider/model" in p.stdout, p.stdout
    assert "HTTP 400" not in p.stdout and "rejected" not in p.stdout, p.stdout


def test_per_tool_limit_is_named_in_the_interrupt(workspace: Path) -> None:
    fail = {"tool_calls": [{"name": "shell", "arguments": {"command": "false"}}]}
    write_script(workspace, fail, fail, fail)
    with (workspace / ".forge.toml").open("a") as f:
        f.write("[tools.shell]\nmax_failures = 2\n")
    trust_workspace(workspace)  # the file changed since write_script trusted it
    p = forge("run", "fail", "-w", str(workspace))
    assert p.returncode == 3, p.stderr
    assert "MaxToolFailurePerTurnLimitReached {limit: 3, errors: {shell: 2}}" in p.stdout
    assert "shell 2 ([tools.shell] max_failures)" in p.stdout
    assert "limit (3) reached" not in p.stdout
    (notice,) = [line for line in p.stdout.splitlines() if "0 of 2 attempts left" in line]
    assert "the turn stops here" in notice and "sent to the model" not in notice


def test_a_secret_the_model_echoes_is_redacted_on_stdout(workspace: Path) -> None:
    secret = "sk-cli-echo-secret-0123456789"
    write_script(workspace, {"text": f"Your key is {secret}."})
    p = forge("run", "what is my key", "-w", str(workspace), env={"OPENAI_API_KEY": secret})
    assert p.returncode == 0, p.stderr
    assert secret not in p.stdout + p.stderr
    assert "Your key is [REDACTED]." in p.stdout


@pytest.mark.parametrize("keep", [False, True])
def test_demo_removes_its_temporary_workspace_unless_kept(tmp_path: Path, keep: bool) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = forge("demo", "--in-process", *(["--keep"] if keep else []), env={"TMPDIR": str(tmp)}, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    left = list(tmp.glob("forge-demo-*"))
    if keep:
        (root,) = left
        assert list((root / ".forge" / "transcripts").glob("*.md"))
        assert f"transcripts: {root}" in p.stdout
    else:
        assert left == []
        assert "temporary workspace removed" in p.stdout


def _typed_at_a_terminal(args: list[str], cwd: Path, end: str) -> str:
    """Start forge-lsp ARGS with a terminal as stdin, as a person typing it would; returns what it said on
    stderr before anything was typed, once it has ended by Ctrl-D or Ctrl-C (end) as that says it does."""
    import pty
    import select
    import signal

    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*forkserver.command(), *args],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=cwd,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    os.close(terminal)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 30)
        assert ready, "nothing on stderr"
        notice = os.read(proc.stderr.fileno(), 4096).decode()
        assert proc.poll() is None  # still serving: a client could be on the other end
        if end == "ctrl-c":
            proc.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
            proc.wait(timeout=15)  # the notice says Ctrl-C ends it: it does, at once
        else:
            os.write(controller, b"\x04")  # Ctrl-D: end of input
            proc.wait(timeout=15)
    finally:
        os.close(controller)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=30)
    assert out == b"" and b"Traceback" not in err, err
    assert proc.returncode == (130 if end == "ctrl-c" else 0), err
    return notice


@pytest.mark.parametrize("end", ["ctrl-d", "ctrl-c"])
def test_a_bare_forge_lsp_in_a_terminal_says_what_it_is_on_stderr_and_keeps_serving(tmp_path: Path, end: str) -> None:
    notice = _typed_at_a_terminal([], tmp_path, end)
    assert "language server" in notice and "stdin/stdout" in notice, notice
    assert "forge-lsp demo" in notice and "forge-lsp run" in notice, notice
    assert "forge-lsp --print-editor-config" in notice, notice


@pytest.mark.parametrize("end", ["ctrl-d", "ctrl-c"])
def test_forge_lsp_acp_in_a_terminal_says_what_it_is_on_stderr_and_keeps_serving(tmp_path: Path, end: str) -> None:
    """`forge-lsp acp` typed at a terminal explains itself as a bare `forge-lsp` does (it said nothing)."""
    notice = _typed_at_a_terminal(["acp"], tmp_path, end)
    assert notice.startswith("forge-lsp acp: ") and "Agent Client Protocol" in notice and "stdin/stdout" in notice, notice
    assert "Ctrl-C or Ctrl-D ends it" in notice and "forge-lsp demo" in notice, notice
    assert "forge-lsp --print-editor-config" in notice, notice


def test_forge_lsp_acp_started_by_a_client_says_nothing(tmp_path: Path) -> None:
    p = subprocess.run([*forkserver.command(), "acp"], input="", capture_output=True, text=True, env=ENV, timeout=30)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr


def test_a_bare_forge_lsp_started_by_an_editor_says_nothing(tmp_path: Path) -> None:
    p = subprocess.run([*forkserver.command()], input="", capture_output=True, text=True, env=ENV, timeout=30)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        p = forge("--tcp", "127.0.0.1", str(taken.getsockname()[1]), cwd=tmp_path)
    assert p.returncode == 1
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("forge-lsp: ") and "address already in use" in line


def test_a_reader_that_goes_away_is_not_an_error_message(workspace: Path) -> None:
    p = subprocess.run(
        f"{sys.executable} -m forge_lsp run hello -w {workspace} --model scripted/echo | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=90,
        env=ENV,
    )
    assert p.stdout.startswith("▶ turn")
    assert "Traceback" not in p.stderr and "Broken pipe" not in p.stderr


def test_trust_says_what_is_wrong_in_the_config_it_trusts(workspace: Path) -> None:
    """forge-lsp trust of a .forge.toml with a typo, then one that does not parse: trusted, and the problem
    said at once (every run would say it), not only 'trusted (.forge.toml)'."""
    (workspace / ".forge.toml").write_text('model = "scripted/echo"\n[tools.shel]\nmax_failures = 2\n')
    p = forge("trust", str(workspace))
    assert p.returncode == 0 and "trusted (.forge.toml)" in p.stdout, p.stdout
    assert "config: " in p.stderr and "tools.shel.max_failures: unknown key (did you mean tools.shell.max_failures?)" in p.stderr
    (workspace / ".forge.toml").write_text('model = "scripted/echo"\n[tools.shell\n')
    p = forge("trust", str(workspace))
    assert p.returncode == 0 and "invalid TOML" in p.stderr and "ignored as a whole" in p.stderr, p.stderr
    (workspace / ".forge.toml").write_text('model = "scripted/echo"\n')
    p = forge("trust", str(workspace))
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_print_editor_config_names_this_installs_own_forge_lsp(tmp_path: Path) -> None:
    """One install story: the README's .venv is never active in the editor, so the settings to paste name its
    forge-lsp by path (Neovim's cmd, VS Code's forge.serverPath, Zed's command), and they are valid as pasted."""
    p = forge("--print-editor-config", cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    script = Path(os.path.abspath(sys.executable)).parent / "forge-lsp"  # pip install -e . put it beside python
    assert script.is_file()
    lines = p.stdout.splitlines()
    root = Path(__file__).resolve().parents[2]
    assert f'vim.opt.rtp:append("{root / "editors" / "nvim"}")' in lines, p.stdout
    assert f'require("forge").setup({{ cmd = {{ "{script}" }} }})' in lines, p.stdout
    (vscode,) = [line for line in lines if line.startswith('"forge.serverPath"')]
    assert json.loads("{" + vscode + "}") == {"forge.serverPath": str(script)}
    (zed,) = [line for line in lines if line.startswith('"agent_servers"')]
    assert json.loads("{" + zed + "}")["agent_servers"]["Forge"] == {
        "type": "custom",
        "command": str(script),
        "args": ["acp"],
        "env": {},
    }
    the_server = subprocess.run([str(script), "--version"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert the_server.returncode == 0 and the_server.stdout.startswith("forge-lsp "), the_server.stderr
    p = forge("--print-editor-config", "run", "x", cwd=tmp_path)
    assert p.returncode == 1 and "--print-editor-config prints the settings and exits" in p.stderr, p.stderr
