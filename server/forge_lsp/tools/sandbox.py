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

from forge_lsp.redact import SECRET_NAMES as CREDENTIAL_NAMES

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

GIT_EXECUTES = ("config", "config.worktree", "hooks", "commondir")
"""In a git directory, kept read-only: git runs what they name later, outside the sandbox (config and
config.worktree name programs, hooks are programs, commondir names the folder whose config is read)."""

MAX_GIT_DIRS = 200
"""Git directories protected inside .git (submodules' .git/modules/*, linked worktrees' .git/worktrees/*)."""

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
    out += _git_mounts(ws)
    protected: list[Path] = []
    made: list[Path] = []  # folders made (empty) first when missing, so nothing can be planted there
    if home and Path(home).is_absolute() and _contains(ws, Path(home).resolve()):
        protected += [Path(home).resolve() / rel for rel in HOME_STARTUP]
        made += [Path(home).resolve() / rel for rel in EDITOR_FILES]
    folders, files = own_files()
    made += folders
    protected += [f for f in files if _contains(ws, f)]
    for folder in made:
        if not _contains(ws, folder) or folder == ws:
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.debug("cannot make %s before the sandbox: %s", folder, exc)
        protected.append(folder)
    for path in protected:
        if os.path.lexists(path) and not path.is_symlink():
            out += ["--ro-bind", str(path), str(path)]
    out += ["--chdir", str(cwd.resolve()), "--", *argv]
    return out


def own_files() -> tuple[list[Path], list[Path]]:
    """forge-lsp's own folders (config, state with the trust store, template cache) as the server finds
    them, and the config file FORGE_LSP_CONFIG names (a file: never made)."""
    from forge_lsp.config import user_config_path
    from forge_lsp.templates import cache_dir
    from forge_lsp.trust import store_path

    config = user_config_path()
    folders = [store_path().parent, cache_dir().parent]
    files: list[Path] = []
    if os.environ.get("FORGE_LSP_CONFIG"):
        files.append(Path(os.path.realpath(config)))
    else:
        folders.append(config.parent)
    return [Path(os.path.realpath(f)) for f in folders], files


def git_dirs(ws: Path) -> list[Path]:
    """The workspace's .git folder and the git directories inside it (submodules', linked worktrees')."""
    top = ws / ".git"
    if top.is_symlink() or not top.is_dir():
        return []
    found = [top]
    for parent, dirs, files in os.walk(top):
        here = Path(parent)
        # Data folders hold no git directory: not walked (objects can be many thousands).
        dirs[:] = sorted(d for d in dirs if d not in ("objects", "refs", "logs", "hooks", "lfs", "info"))
        if here != top and "HEAD" in files and len(found) < MAX_GIT_DIRS:
            found.append(here)
    return found


def _git_mounts(ws: Path) -> list[str]:
    """Mounts that keep git from running what a sandboxed command wrote, later, outside the sandbox.

    A .git folder (and each git directory in it) is bound onto itself: a mount point cannot be
    renamed, removed or replaced (EBUSY), so `mv .git aside` and a writable copy put back fail,
    while objects, index and refs stay writable for git add/commit/checkout inside. What git
    executes from (config, hooks, commondir) is bound read-only on top. A .git file (a linked
    worktree, a submodule) is bound read-only: it cannot be rewritten to name another gitdir.
    """
    out: list[str] = []
    dotgit = ws / ".git"
    if dotgit.is_symlink():
        return out
    if dotgit.is_file():
        return ["--ro-bind", str(dotgit), str(dotgit)]
    for gitdir in git_dirs(ws):
        out += ["--bind", str(gitdir), str(gitdir)]
        for name in GIT_EXECUTES:
            path = gitdir / name
            if os.path.lexists(path) and not path.is_symlink():
                out += ["--ro-bind", str(path), str(path)]
    return out


GIT_PLANTABLE = ("commondir", "config.worktree")
"""Files git reads in a git directory that may not exist (so nothing is mounted over them): one a
sandboxed command creates is removed when it ends (a command that is still running is not watched)."""


def git_absent(ws: Path) -> list[Path]:
    """The GIT_PLANTABLE files missing from the workspace's git directories now (before a command)."""
    return [gitdir / name for gitdir in git_dirs(ws) for name in GIT_PLANTABLE if not os.path.lexists(gitdir / name)]


def remove_planted(absent: Sequence[Path]) -> list[Path]:
    """Remove those of the files that a command created; the ones removed."""
    removed = []
    for path in absent:
        if not os.path.lexists(path):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            log.warning("could not remove %s planted by a sandboxed command: %s", path, exc)
            continue
        removed.append(path)
    return removed


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
