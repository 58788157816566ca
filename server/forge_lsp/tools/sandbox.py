"""The shell sandbox: each command under bubblewrap (bwrap), as Claude Code's Linux sandbox does.

Inside: no capabilities (even when the server runs as root: a user namespace
of its own, every capability dropped, no_new_privs), so no mount can be undone;
the file system read-only except the workspace and a private /tmp, and in the
workspace what git, the user's shell or forge-lsp runs later kept as it is
(tools.protect); a minimal /dev, a /proc of its own pid namespace; credential stores in the
home folder, agent and container sockets hidden; no network unless
[tools.shell] network = true; secret environment variables removed; a new
session (no terminal to inject keystrokes into), killed with the server.
It does not hide the rest of the file system from reading, and what a
command writes in the workspace stays there.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from forge_lsp.redact import SECRET_NAMES as CREDENTIAL_NAMES
from forge_lsp.tools import protect
from forge_lsp.tools.protect import Protection

log = logging.getLogger(__name__)

SECRET_NAMES = (
    *CREDENTIAL_NAMES,
    "AWS_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "AZURE_OPENAI_*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)
"""Environment variable names a sandboxed command does not get (compared upper-cased): every credential
name (redact.SECRET_NAMES), and the model providers' and agents' variables."""

_CREDENTIAL_URL = re.compile(r"://[^/\s:@]+:[^/\s@]+@")
"""A value like postgres://user:password@host carries a password whatever its name."""

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
)
"""Paths under the home folder hidden inside the sandbox (what an attacker would read first)."""

SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock")
"""Sockets that hand out root or the user's session; hidden."""

HOME_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".xprofile",
    ".xsessionrc",
    ".pam_environment",
    ".gitconfig",
    ".config/git",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".config/fish",
    ".local/bin",
)
"""Files the user's own shell, git or desktop runs later: read-only even when the workspace is the home folder;
one that does not exist yet may not be created (see guards)."""

EDITOR_FILES = (
    ".config/Code",
    ".config/Code - OSS",
    ".config/VSCodium",
    ".config/nvim",
    ".local/state/nvim",
    ".local/share/nvim",
)
"""The editors' settings, startup files and trust records (they feed forge-lsp's config and trust): read-only
when the workspace holds the home folder; a missing one is made (empty) first, so none can be planted."""

INSTALL_HINT = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or set [tools.shell] sandbox = "none"'

_probes: dict[str, str | None] = {}
_warned: set[str] = set()


def is_secret(name: str, value: str) -> bool:
    """Whether an environment variable looks like a credential."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, p) for p in SECRET_NAMES) or bool(_CREDENTIAL_URL.search(value))


def scrub_env(env: Mapping[str, str], allow: Sequence[str] = ()) -> dict[str, str]:
    """The environment without secrets, except names the user allowed ([tools.shell] allow_env)."""
    return {k: v for k, v in env.items() if not is_secret(k, v) or any(fnmatch.fnmatchcase(k, a) for a in allow)}


def bwrap_path() -> str | None:
    """The bwrap executable, or None when bubblewrap is not installed."""
    return shutil.which("bwrap")


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def bwrap_argv(
    bwrap: str,
    workspace: Path,
    cwd: Path,
    argv: Sequence[str],
    network: bool = False,
    home: str | None = None,
    protected: Protection | None = None,
) -> list[str]:
    """The bwrap command line that runs argv in cwd with the workspace writable and the rest read-only;
    protected: what protection() found (computed here when not given)."""
    ws = workspace.resolve()
    out = [
        bwrap,
        "--die-with-parent",  # the server dies: so does the command
        "--new-session",  # no controlling terminal: TIOCSTI cannot type into the user's one
        # A user namespace of its own and no capabilities at all, whatever the server's uid: bwrap
        # keeps every capability for a root caller otherwise, and root inside could umount the
        # tmpfs over ~/.ssh or remount / read-write. bwrap sets no_new_privs too, so no setuid
        # program gives them back.
        "--unshare-user",
        "--cap-drop",
        "ALL",
        "--unshare-pid",  # its own pid namespace: everything it started dies with it
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not network:
        out.append("--unshare-net")
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if Path("/var/tmp").is_dir() and not _contains(Path("/var/tmp"), ws):
        out += ["--tmpfs", "/var/tmp"]
    out += ["--bind", str(ws), str(ws)]
    home = home if home is not None else os.environ.get("HOME")
    plan = protected if protected is not None else protection(ws, home)
    hidden = _hidden(home, ws)
    # Folders bound onto themselves, the shallow ones first (a later bind of a folder would cover the
    # mounts under it), then the hidden ones over them, then what is read-only on top.
    for folder in plan.pinned:
        if not any(_contains(h, folder) for h in hidden):
            out += ["--bind", str(folder), str(folder)]
    for path in hidden:
        # A folder becomes an empty tmpfs; a file or socket becomes /dev/null.
        out += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
    for path in plan.read_only:
        if not any(_contains(h, path) for h in hidden):
            out += ["--ro-bind", str(path), str(path)]
    out += ["--chdir", str(cwd.resolve()), "--", *argv]
    return out


def _hidden(home: str | None, ws: Path) -> list[Path]:
    """The credential folders and sockets hidden inside the sandbox (a symlinked one: what it leads to)."""
    hidden: list[Path] = []
    if home and Path(home).is_absolute() and Path(home) != Path("/"):
        hidden += [Path(home) / p for p in HOME_SECRETS]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute() and Path(runtime) != Path("/"):
        hidden.append(Path(runtime))
    hidden += [Path(s) for s in SOCKETS]
    out = []
    for link in hidden:
        path = Path(os.path.realpath(link))
        if not _contains(path, ws) and path.exists() and path != Path("/"):
            out.append(path)
    return out


def protection(ws: Path, home: str | None) -> Protection:
    """What a command in ws may not change (see tools.protect): git, the startup files and editors' folders
    when home lies in ws, forge-lsp's own files."""
    return protect.protection(ws.resolve(), home, own_files(), EDITOR_FILES, HOME_STARTUP)


def own_files() -> tuple[list[Path], list[Path]]:
    """forge-lsp's own folders (config, state with the trust store, template cache) as the server finds
    them, and the config file FORGE_LSP_CONFIG names (a file: never made, and guarded while missing)."""
    from forge_lsp.config import user_config_path
    from forge_lsp.templates import cache_dir
    from forge_lsp.trust import store_path

    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    folders = [store_path().parent, cache_dir().parent, Path(base) / "forge-lsp"]
    files: list[Path] = []
    if os.environ.get("FORGE_LSP_CONFIG"):
        files.append(Path(os.path.realpath(user_config_path())))
    return [Path(os.path.realpath(f)) for f in folders], files


def _probe(bwrap: str) -> str | None:
    """Run the sandbox once on nothing: None if it works, else why not (user namespaces off, ...)."""
    try:
        done = subprocess.run(
            bwrap_argv(bwrap, Path("/"), Path("/"), ["/bin/true"], network=False, home="", protected=Protection()),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create a sandbox here ({detail[-1] if detail else f'exit code {done.returncode}'}; are user namespaces disabled?)"
    return None


async def unavailable() -> str | None:
    """Why the sandbox cannot run on this machine, or None when it can (probed once, then cached)."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if bwrap not in _probes:
        _probes[bwrap] = await asyncio.to_thread(_probe, bwrap)
    return _probes[bwrap]


def warn_once(message: str, notice: Callable[[str], None]) -> None:
    """Tell the user about a sandbox problem the first time it is met (in this server), not on every command."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)
        notice(message)
