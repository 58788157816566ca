"""The shell sandbox: each command under bubblewrap (bwrap), as Claude Code's Linux sandbox does.

Inside: no capabilities (even when the server runs as root: a user namespace
of its own, every capability dropped, no_new_privs), so no mount can be undone;
the file system read-only except the workspace and a private /tmp;
a minimal /dev, a /proc of its own pid namespace; credential stores in the
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

log = logging.getLogger(__name__)

SECRET_NAMES = (
    "*_KEY",
    "*_KEY_*",
    "*_API_KEY",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "AWS_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "AZURE_OPENAI_*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)
"""Environment variable names a sandboxed command does not get (compared upper-cased)."""

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

WORKSPACE_READ_ONLY = (".git/hooks", ".git/config")
"""Inside the workspace, kept read-only: git would run what they name later, outside the sandbox."""

HOME_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".gitconfig",
    ".config/git",
    ".config/autostart",
    ".config/systemd",
    ".config/fish",
    ".local/bin",
)
"""Files the user's own shell, git or desktop runs later: read-only even when the workspace is the home folder."""

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
    bwrap: str, workspace: Path, cwd: Path, argv: Sequence[str], network: bool = False, home: str | None = None
) -> list[str]:
    """The bwrap command line that runs argv in cwd with the workspace writable and the rest read-only."""
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
    hidden: list[Path] = []
    home = home if home is not None else os.environ.get("HOME")
    if home and Path(home).is_absolute() and Path(home) != Path("/"):
        hidden += [Path(home) / p for p in HOME_SECRETS]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute() and Path(runtime) != Path("/"):
        hidden.append(Path(runtime))
    hidden += [Path(s) for s in SOCKETS]
    # After the workspace's bind, so a workspace that is the home folder still hides them.
    for link in hidden:
        path = Path(os.path.realpath(link))  # a symlinked ~/.ssh: hide what it points to
        if _contains(path, ws) or not path.exists() or path == Path("/"):
            continue
        # A folder becomes an empty tmpfs; a file or socket becomes /dev/null.
        out += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
    protected = [ws / rel for rel in WORKSPACE_READ_ONLY]
    if home and Path(home).is_absolute() and _contains(ws, Path(home).resolve()):
        protected += [Path(home).resolve() / rel for rel in HOME_STARTUP]
    for path in protected:
        if os.path.lexists(path) and not path.is_symlink():
            out += ["--ro-bind", str(path), str(path)]
    out += ["--chdir", str(cwd.resolve()), "--", *argv]
    return out


def _probe(bwrap: str) -> str | None:
    """Run the sandbox once on nothing: None if it works, else why not (user namespaces off, ...)."""
    try:
        done = subprocess.run(
            bwrap_argv(bwrap, Path("/"), Path("/"), ["/bin/true"], network=False, home=""),
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
