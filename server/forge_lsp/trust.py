"""Workspace trust: the user's decisions, kept outside every workspace.

A cloned repository is untrusted input. The user trusts a folder (VS Code's
workspace.isTrusted, Neovim's :ForgeTrust, ``forge-lsp trust DIR``); the
decision is recorded in ``$XDG_STATE_HOME/forge-lsp/trust.json`` (by default
``~/.local/state``) with a fingerprint of the files that trust unlocks: the
workspace's .forge.toml, its template overrides and a scripted model's
script. When one of them changes (a ``git pull``), the fingerprint no longer
matches and the workspace is untrusted again until the user says otherwise.
Nothing in a workspace can write this file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import time
import tomllib
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import SCRIPTED_PREFIX, WORKSPACE_FILE
from forge_lsp.userfiles import read_table, write_json

log = logging.getLogger(__name__)

TEMPLATES_DIR = Path(".forge") / "templates"
MAX_HASHED_FILES = 1000
"""More template files than this are fingerprinted by name and size only."""
MAX_STORE_BYTES = 4 * 1024 * 1024
VERSION = 1

TRUSTED, CHANGED, UNTRUSTED = "trusted", "changed", "untrusted"


def store_path() -> Path:
    """$XDG_STATE_HOME/forge-lsp/trust.json (default ~/.local/state/forge-lsp/trust.json)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "forge-lsp" / "trust.json"


def _script_path(root: Path) -> Path | None:
    """The workspace file's scripted model's script, when it names a file in the workspace."""
    try:
        data = (root / WORKSPACE_FILE).read_bytes()
        model = tomllib.loads(data.decode("utf-8")).get("model")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(model, str) or not model.startswith(SCRIPTED_PREFIX):
        return None
    name = model[len(SCRIPTED_PREFIX) :]
    from forge_lsp.llm.builtin_scripts import BUILTIN

    if not name or name in BUILTIN:
        return None  # a builtin script (demo, echo): nothing in the workspace
    return Path(name) if Path(name).is_absolute() else root / name


def trust_files(root: Path) -> list[Path]:
    """The files whose content a trust decision covers, in a stable order."""
    files = [root / WORKSPACE_FILE]
    folder = root / TEMPLATES_DIR
    try:
        files += sorted(p for p in folder.iterdir()) if folder.is_dir() else []
    except OSError:
        pass
    script = _script_path(root)
    if script is not None:
        files.append(script)
    return files


def _digest_file(h: Any, path: Path, root: Path, full: bool) -> None:
    """Feed one file's identity into h: its name, kind and (for a regular file) content."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = str(path)
    h.update(b"\0path\0" + rel.encode("utf-8", "surrogateescape"))
    try:
        st = path.lstat()
    except OSError:
        h.update(b"\0missing")
        return
    if stat.S_ISLNK(st.st_mode):
        # A link is fingerprinted as a link: changing where it points asks again.
        h.update(b"\0link\0" + os.readlink(path).encode("utf-8", "surrogateescape"))
        return
    if not stat.S_ISREG(st.st_mode):
        h.update(b"\0special")
        return
    h.update(b"\0size\0" + str(st.st_size).encode())
    if not full:
        return
    try:
        with path.open("rb") as f:  # never a FIFO: lstat said regular file
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        h.update(b"\0unreadable\0" + str(exc.errno).encode())


def fingerprint(root: Path) -> str:
    """sha256 over the trust-relevant files of root (names, kinds and contents)."""
    root = root.resolve()
    h = hashlib.sha256(b"forge-lsp trust v1")
    files = trust_files(root)
    for i, path in enumerate(files):
        _digest_file(h, path, root, full=i < MAX_HASHED_FILES)
    return h.hexdigest()


class TrustStore:
    """The user's trust decisions: folder -> fingerprint of its trust-relevant files."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or store_path()

    def _read(self) -> dict[str, Any]:
        folders = read_table(self.path, "workspaces", MAX_STORE_BYTES, "trust store", "no workspace is trusted")
        return folders if folders is not None else {}

    def _write(self, folders: dict[str, Any]) -> None:
        write_json(self.path, {"version": VERSION, "workspaces": folders}, ".trust-")

    def state(self, root: Path) -> str:
        """TRUSTED, CHANGED (trusted once, a trust-relevant file changed since) or UNTRUSTED."""
        entry = self._read().get(str(root.resolve()))
        if not isinstance(entry, dict):
            return UNTRUSTED
        return TRUSTED if entry.get("fingerprint") == fingerprint(root) else CHANGED

    def is_trusted(self, root: Path) -> bool:
        """Whether the user trusts root as its trust-relevant files are now."""
        return self.state(root) == TRUSTED

    def trust(self, root: Path) -> str:
        """Record root as trusted with its current files; returns the fingerprint."""
        folders = self._read()
        digest = fingerprint(root)
        folders[str(root.resolve())] = {"fingerprint": digest, "trustedAt": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(folders)
        return digest

    def revoke(self, root: Path) -> bool:
        """Forget root's trust; True when it was recorded."""
        folders = self._read()
        if folders.pop(str(root.resolve()), None) is None:
            return False
        self._write(folders)
        return True
