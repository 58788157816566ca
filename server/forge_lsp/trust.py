"""Workspace trust: the user's decisions, kept outside every workspace.

A cloned repository is untrusted input. The user trusts a folder (VS Code's
workspace.isTrusted, Neovim's :ForgeTrust, ``forge-lsp trust DIR``); the
decision is recorded in ``$XDG_STATE_HOME/forge-lsp/trust.json`` (by default
``~/.local/state``) with a fingerprint of the files that trust unlocks: the
workspace's .forge.toml, its .mcp.json, its template overrides, agents and commands
and a scripted model's script. When one of them changes (a ``git pull``), the fingerprint no longer
matches and the workspace is untrusted again until the user says otherwise.
A link among them is hashed as its text and what it resolves to; one that
leads out of the workspace, or more than MAX_TEMPLATE_FILES templates, and
the workspace cannot be trusted at all (refusal() says why). Nothing in a
workspace can write this file.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import time
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from forge_lsp.domain.config import SCRIPTED_PREFIX, WORKSPACE_FILE
from forge_lsp.userfiles import read_table, write_json

log = logging.getLogger(__name__)

TEMPLATES_DIR = Path(".forge") / "templates"
AGENTS_DIR = Path(".forge") / "agents"
COMMANDS_DIR = Path(".forge") / "commands"
TRUSTED_DIRS = (TEMPLATES_DIR, AGENTS_DIR, COMMANDS_DIR)
"""The folders of .forge/ whose every file a trust decision covers (each at most MAX_TEMPLATE_FILES entries)."""
MAX_TEMPLATE_FILES = 1000
"""More entries than this in .forge/templates and the workspace cannot be trusted (bounded work, every byte hashed)."""
MAX_STORE_BYTES = 4 * 1024 * 1024
VERSION = 1

TRUSTED, CHANGED, UNTRUSTED = "trusted", "changed", "untrusted"


class NotTrustable(OSError):
    """The workspace cannot be trusted as it is; the message says why and what to change.

    An OSError so that every caller that reports a failed trust decision (``forge-lsp trust``,
    forge.trust, the Trust button) reports this one too, in its words.
    """


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


def _templates(root: Path, folder_name: Path = TEMPLATES_DIR) -> list[Path] | None:
    """The entries of .forge/templates (or another of TRUSTED_DIRS), sorted; None when there are more than
    MAX_TEMPLATE_FILES.

    Reading stops at the first entry past the limit: a hostile tree of 100k files costs no more.
    """
    folder = root / folder_name
    names: list[str] = []
    try:
        if not folder.is_dir():
            return []
        with os.scandir(folder) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) > MAX_TEMPLATE_FILES:
                    return None
    except OSError:
        return []
    return [folder / name for name in sorted(names)]


MCP_FILE = ".mcp.json"
"""The workspace's MCP servers (they start processes): covered by trust when the file is there."""


def trust_files(root: Path) -> list[Path]:
    """The files whose content a trust decision covers, in a stable order: .forge.toml, .mcp.json (when there),
    templates, agents, commands, script. (A workspace trusted before it had a .mcp.json, agents or commands asks
    again when one appears.)"""
    files = [root / WORKSPACE_FILE]
    if os.path.lexists(root / MCP_FILE):
        files.append(root / MCP_FILE)
    for folder in TRUSTED_DIRS:
        files += _templates(root, folder) or []
    script = _script_path(root)
    if script is not None:
        files.append(script)
    return files


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def refusal(root: Path) -> str | None:
    """Why root cannot be trusted as it is, or None.

    A trust-relevant file (or the templates folder) that resolves outside the workspace: what it
    leads to is not the repository's to pin, so no fingerprint can cover it. More template files
    than MAX_TEMPLATE_FILES: hashing them all would be unbounded work.
    """
    root = root.resolve()
    for folder in TRUSTED_DIRS:
        if _templates(root, folder) is None:
            return (
                f"{folder.as_posix()} holds more than {MAX_TEMPLATE_FILES} files; a workspace with more "
                "cannot be trusted (remove the extra files)"
            )
    for path in [*(root / folder for folder in TRUSTED_DIRS), *trust_files(root)]:
        try:
            target = path.resolve()
        except (OSError, RuntimeError) as exc:  # a link loop
            return f"{_rel(path, root)} cannot be resolved ({exc})"
        if not target.is_relative_to(root):
            return (
                f"{_rel(path, root)} is a link outside the workspace (to {target}); a trust-relevant file "
                "must be inside it (copy it in, or point the link inside)"
            )
    return None


def cannot_trust(root: Path) -> str | None:
    """The one line that says why root cannot be trusted (refusal()), or None: what every way of
    trusting says (forge-lsp trust, forge.trust, run --trust, the editor's own trust)."""
    reason = refusal(root)
    return None if reason is None else f"{root.resolve()} cannot be trusted: {reason}"


def _digest_content(h: Any, path: Path) -> None:
    """Feed the kind, size and every byte of what path (no link in it any more) is into h."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        h.update(b"\0missing" if exc.errno == errno.ENOENT else b"\0unreadable\0" + str(exc.errno).encode())
        return
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a folder, a FIFO, a device: never read
            h.update(b"\0special")
            return
        h.update(b"\0size\0" + str(st.st_size).encode() + b"\0content\0")
        try:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        except OSError as exc:
            h.update(b"\0unreadable\0" + str(exc.errno).encode())


def _digest_file(h: Any, path: Path, root: Path) -> None:
    """Feed one file's identity into h: its name, its link text if a link, and the content it resolves to."""
    h.update(b"\0path\0" + _rel(path, root).encode("utf-8", "surrogateescape"))
    try:
        st = path.lstat()
    except OSError:
        h.update(b"\0missing")
        return
    if stat.S_ISLNK(st.st_mode):
        # Changing where it points asks again, and so does changing what it points to (a pull).
        h.update(b"\0link\0" + os.readlink(path).encode("utf-8", "surrogateescape"))
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        h.update(b"\0unresolvable")
        return
    if not target.is_relative_to(root):
        h.update(b"\0outside\0" + str(target).encode("utf-8", "surrogateescape"))  # refused; never read
        return
    h.update(b"\0target\0" + _rel(target, root).encode("utf-8", "surrogateescape"))
    _digest_content(h, target)


class _Tee:
    """Feeds what it is given into several hashes: the whole fingerprint and one file's own digest."""

    def __init__(self, *hashes: Any) -> None:
        self.hashes = hashes

    def update(self, data: bytes) -> None:
        for h in self.hashes:
            h.update(data)


class Survey(NamedTuple):
    """root's trust-relevant files as they are now: the fingerprint, why it cannot be trusted (None: it
    can), and each file's own digest by its path relative to root (the same bytes as the fingerprint's)."""

    fingerprint: str
    reason: str | None
    files: dict[str, str]


def survey(root: Path) -> Survey:
    """The fingerprint of root's trust-relevant files, each file's digest, and why it cannot be trusted."""
    root = root.resolve()
    reason = refusal(root)
    h = hashlib.sha256(b"forge-lsp trust v2")
    if reason is not None:
        h.update(b"\0refused\0" + reason.encode("utf-8", "surrogateescape"))
    files: dict[str, str] = {}
    for path in trust_files(root):  # every file in full: .forge.toml, each template, the script
        own = hashlib.sha256()
        _digest_file(_Tee(h, own), path, root)
        files[_rel(path, root)] = own.hexdigest()
    return Survey(h.hexdigest(), reason, files)


def text_digest(rel: str, data: bytes) -> str:
    """The digest survey() gives a regular file (no link) at rel holding exactly data: an editor's
    buffer compared with what trust covers, without reading the disk again."""
    own = hashlib.sha256(b"\0path\0" + rel.encode("utf-8", "surrogateescape"))
    own.update(b"\0target\0" + rel.encode("utf-8", "surrogateescape"))
    own.update(b"\0size\0" + str(len(data)).encode() + b"\0content\0" + data)
    return own.hexdigest()


def fingerprint(root: Path) -> str:
    """sha256 over the trust-relevant files of root: names, link texts and every byte they resolve to."""
    return survey(root).fingerprint


def save_keeps_trust(trusted: dict[str, str], now: Survey, rel: str, data: bytes) -> bool:
    """Whether the only change since the files were trusted is rel now holding exactly data.

    trusted: each file's digest when the workspace was last trusted. The user saved data to rel in
    the editor: every other trust-relevant file must be as trusted (none added; one gone is used no
    more), and rel on disk must be exactly what the user saved (a plain file, not a link).
    """
    if now.reason is not None or now.files.get(rel) != text_digest(rel, data):
        return False
    return all(trusted.get(name) == digest for name, digest in now.files.items() if name != rel)


def unchanged_but(root: Path, trusted: dict[str, str], now: Survey, rel: str) -> bool:
    """Whether every trust-relevant file but rel is as trusted: none added, each trusted one (even
    one no longer listed, as the script of a .forge.toml that does not parse) the same now."""
    root = root.resolve()
    if now.reason is not None or any(name not in trusted for name in now.files if name != rel):
        return False
    for name, digest in trusted.items():
        if name == rel:
            continue
        own = hashlib.sha256()
        _digest_file(own, root / name, root)
        if own.hexdigest() != digest:
            return False
    return True


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
        return self.check(root)[0]

    def check(self, root: Path) -> tuple[str, Survey | None]:
        """state() and the survey it compared (None when root was never trusted)."""
        entry = self._read().get(str(root.resolve()))
        if not isinstance(entry, dict):
            return UNTRUSTED, None
        found = survey(root)
        if found.reason is not None:  # never trusted, whatever was recorded
            return CHANGED, found
        return (TRUSTED if entry.get("fingerprint") == found.fingerprint else CHANGED), found

    def is_trusted(self, root: Path) -> bool:
        """Whether the user trusts root as its trust-relevant files are now."""
        return self.state(root) == TRUSTED

    def trust(self, root: Path, found: Survey | None = None) -> str:
        """Record root as trusted with its current files (found: as surveyed then); returns the fingerprint.

        Raises NotTrustable (nothing recorded) when refusal() says why root cannot be trusted.
        """
        found = found or survey(root)
        if found.reason is not None:
            raise NotTrustable(f"{root.resolve()} cannot be trusted: {found.reason}")  # as cannot_trust() says it
        folders = self._read()
        folders[str(root.resolve())] = {"fingerprint": found.fingerprint, "trustedAt": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(folders)
        return found.fingerprint

    def revoke(self, root: Path) -> bool:
        """Forget root's trust; True when it was recorded."""
        folders = self._read()
        if folders.pop(str(root.resolve()), None) is None:
            return False
        self._write(folders)
        return True
