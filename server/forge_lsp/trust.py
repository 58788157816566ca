"""Workspace trust: the user's decisions, kept outside every workspace.

A cloned repository is untrusted input. The user trusts a folder (VS Code's
workspace.isTrusted, Neovim's :ForgeTrust, ``forge-lsp trust DIR``); the
decision is recorded in ``$XDG_STATE_HOME/forge-lsp/trust.json`` (by default
``~/.local/state``) with a fingerprint of the files that trust unlocks: the
workspace's .forge.toml, its .mcp.json, its template overrides, agents, commands and hook scripts
(.forge/hooks/) and a scripted model's script. When one of them changes (a ``git pull``), the fingerprint no longer
matches and the workspace is untrusted again until the user says otherwise.
A link among them is hashed as its text and what it resolves to; one that
leads out of the workspace, one that is a FIFO or a device, one larger than
MAX_TRUST_FILE_BYTES, or more than MAX_TEMPLATE_FILES templates, and the
workspace cannot be trusted at all (refusal() says why). Every file an agent
or a command names (its ``model: scripted/<file>``) is trust-relevant too.
Nothing in a workspace can write this file.

An editor's own word (VS Code's workspace.isTrusted, Neovim's vim.secure of
.forge.toml) stands only for what it covers (EditorTrust): it is recorded here
once, for the files as they are then, where the user has made no decision of
their own; a recorded decision (a fingerprint, or a revoke) always wins over it.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from forge_lsp.domain.config import SCRIPTED_PREFIX, WORKSPACE_FILE
from forge_lsp.textfile import read_text
from forge_lsp.userfiles import read_table, write_json

log = logging.getLogger(__name__)

TEMPLATES_DIR = Path(".forge") / "templates"
AGENTS_DIR = Path(".forge") / "agents"
COMMANDS_DIR = Path(".forge") / "commands"
HOOKS_DIR = Path(".forge") / "hooks"
"""Where a workspace keeps the scripts its [[hooks]] run: covered by trust, so a pull that changes one asks again."""
TRUSTED_DIRS = (TEMPLATES_DIR, AGENTS_DIR, COMMANDS_DIR, HOOKS_DIR)
"""The folders of .forge/ whose every file a trust decision covers (each at most MAX_TEMPLATE_FILES entries)."""
MAX_TEMPLATE_FILES = 1000
"""More entries than this in .forge/templates and the workspace cannot be trusted (bounded work, every byte hashed)."""
MAX_TRUST_FILE_BYTES = 4 * 1024 * 1024
"""A larger trust-relevant file cannot be trusted: every byte of each is hashed at every check (a sparse file of
gigabytes would make each one slow), and none of the readers takes more (config 1 MiB, definitions 256 KiB)."""
MAX_CONFIG_BYTES = 1024 * 1024
"""What of .forge.toml is read here to find its script (config.MAX_CONFIG_BYTES: a larger one is not used)."""
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


def _inside(path: Path, root: Path) -> Path | None:
    """What path resolves to, when that is inside root (None: outside, or a link loop)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return None
    return real if real.is_relative_to(root) else None


def named_script(root: Path, model: Any) -> Path | None:
    """The file a model name makes trust-relevant: scripted/<file> (relative to the workspace, or absolute);
    None for another model or a builtin script (scripted/demo, scripted/echo: nothing in the workspace)."""
    if not isinstance(model, str) or not model.startswith(SCRIPTED_PREFIX):
        return None
    name = model[len(SCRIPTED_PREFIX) :]
    from forge_lsp.llm.builtin_scripts import BUILTIN

    if not name or name in BUILTIN or "\0" in name:
        return None
    return Path(name) if Path(name).is_absolute() else root / name


def _script_path(root: Path) -> Path | None:
    """The workspace file's scripted model's script, when it names a file.

    .forge.toml is read as the config loader reads it: a regular file inside the workspace, at most
    MAX_CONFIG_BYTES, never blocking (a link to /dev/zero or a FIFO is not read; refusal() says why)."""
    real = _inside(root / WORKSPACE_FILE, root)
    if real is None:
        return None
    try:
        text = read_text(real, MAX_CONFIG_BYTES)
        model = tomllib.loads(text).get("model") if text is not None else None
    except (OSError, ValueError, RecursionError):  # Unusable and TOMLDecodeError are ValueErrors
        return None
    return named_script(root, model)


_named: dict[Path, tuple[tuple[int, int, int], Any]] = {}
"""Each definition file's model field by the file's signature: a check parses only the files that changed."""
MAX_NAMED_CACHE = 4096


def _definition_model(path: Path, root: Path) -> Any:
    """The `model` field of an agent's or a command's front matter, read as their loaders read it (a regular
    file inside the workspace, size-capped); None when it cannot be read or has none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _named.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    from forge_lsp.frontmatter import parse, read_definition

    try:
        model = parse(read_definition(path, root)).fields.get("model")
    except (OSError, ValueError, RecursionError):  # FrontMatterError and Unusable are ValueErrors
        model = None
    if len(_named) >= MAX_NAMED_CACHE:
        _named.clear()
    _named[path] = (key, model)
    return model


def definition_scripts(root: Path) -> list[Path]:
    """The files the workspace's agents and commands name (`model: scripted/<file>`), in a stable order: only
    the definitions their loaders read (frontmatter.definitions), each parsed as they parse it."""
    from forge_lsp.frontmatter import definitions

    found: list[Path] = []
    for folder in (AGENTS_DIR, COMMANDS_DIR):
        for path in definitions(root / folder):
            script = named_script(root, _definition_model(path, root))
            if script is not None and script not in found:
                found.append(script)
    return found


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
    templates, agents, commands, .forge.toml's script, then the scripts the agents and commands name. (A
    workspace trusted before it had a .mcp.json, agents or commands asks again when one appears.)"""
    files = [root / WORKSPACE_FILE]
    if os.path.lexists(root / MCP_FILE):
        files.append(root / MCP_FILE)
    for folder in TRUSTED_DIRS:
        files += _templates(root, folder) or []
    for script in [_script_path(root), *definition_scripts(root)]:
        if script is not None and script not in files:
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
        reason = _unusable(target)
        if reason is not None:
            return f"{_rel(path, root)} {reason}"
    return None


def _unusable(target: Path) -> str | None:
    """Why a trust-relevant file (no link in it any more) cannot be trusted as it is: a FIFO, a device or a socket
    (reading one blocks or never ends), or more than MAX_TRUST_FILE_BYTES. Missing, or a folder: nothing to say."""
    try:
        st = os.stat(target)  # never opened: opening a FIFO or a device may block, or have effects
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a FIFO, a device or a socket); a trust-relevant file must be one"
    if st.st_size > MAX_TRUST_FILE_BYTES:
        return (
            f"is {st.st_size} bytes, over the {MAX_TRUST_FILE_BYTES // (1024 * 1024)} MiB a trust-relevant file may "
            "have; a workspace with a larger one cannot be trusted"
        )
    return None


def watched_files(root: Path, found: Survey | None) -> list[Path]:
    """The files a check on disk looks at for root: .forge.toml and .mcp.json always, and every trust-relevant file
    the last survey found (the scripts .forge.toml, the agents and the commands name included)."""
    files = [root / WORKSPACE_FILE, root / MCP_FILE]
    for rel in found.files if found is not None else ():
        path = root / rel
        if path not in files:
            files.append(path)
    return files


CLIENT_WATCHED = re.compile(r"(\.forge\.toml|\.mcp\.json|\.forge/(templates|agents|commands)/[^/]*\.md)")
"""The files an editor that watches files for the server reports (lsp/config_report.watch_files' globs)."""


def client_watches(path: Path, root: Path) -> bool:
    """Whether an editor watching the globs of CLIENT_WATCHED reports a change of path: a plain file matched by
    them (a link's target changing is not a change of the link, and a script elsewhere is not matched)."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return False
    return bool(CLIENT_WATCHED.fullmatch(rel)) and not path.is_symlink()


def cannot_trust(root: Path) -> str | None:
    """The one line that says why root cannot be trusted (refusal()), or None: what every way of
    trusting says (forge-lsp trust, forge.trust, run --trust, the editor's own trust)."""
    reason = refusal(root)
    return None if reason is None else f"{root.resolve()} cannot be trusted: {reason}"


def _digest_content(h: Any, path: Path) -> str | None:
    """Feed the kind, size and every byte of what path (no link in it any more) is into h; the sha256 of those
    bytes when it is a regular file read whole (None: missing, special, unreadable or too large)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        h.update(b"\0missing" if exc.errno == errno.ENOENT else b"\0unreadable\0" + str(exc.errno).encode())
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a folder, a FIFO, a device: never read
            h.update(b"\0special")
            return None
        h.update(b"\0size\0" + str(st.st_size).encode() + b"\0content\0")
        content = hashlib.sha256()
        left = MAX_TRUST_FILE_BYTES + 1  # a file that grew since refusal() looked is not read whole
        try:
            while left > 0 and (chunk := f.read(min(1 << 20, left))):
                h.update(chunk)
                content.update(chunk)
                left -= len(chunk)
        except OSError as exc:
            h.update(b"\0unreadable\0" + str(exc.errno).encode())
            return None
        if left <= 0:
            h.update(b"\0toolarge")
            return None
        return content.hexdigest()


def _digest_file(h: Any, path: Path, root: Path) -> str | None:
    """Feed one file's identity into h: its name, its link text if a link, and the content it resolves to.
    Returns the sha256 of that content (see _digest_content)."""
    h.update(b"\0path\0" + _rel(path, root).encode("utf-8", "surrogateescape"))
    try:
        st = path.lstat()
    except OSError:
        h.update(b"\0missing")
        return None
    if stat.S_ISLNK(st.st_mode):
        # Changing where it points asks again, and so does changing what it points to (a pull).
        h.update(b"\0link\0" + os.readlink(path).encode("utf-8", "surrogateescape"))
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        h.update(b"\0unresolvable")
        return None
    if not target.is_relative_to(root):
        h.update(b"\0outside\0" + str(target).encode("utf-8", "surrogateescape"))  # refused; never read
        return None
    h.update(b"\0target\0" + _rel(target, root).encode("utf-8", "surrogateescape"))
    return _digest_content(h, target)


class _Tee:
    """Feeds what it is given into several hashes: the whole fingerprint and one file's own digest."""

    def __init__(self, *hashes: Any) -> None:
        self.hashes = hashes

    def update(self, data: bytes) -> None:
        for h in self.hashes:
            h.update(data)


class Survey(NamedTuple):
    """root's trust-relevant files as they are now: the fingerprint, why it cannot be trusted (None: it
    can), each file's own digest by its path relative to root (the same bytes as the fingerprint's), and
    the sha256 of each one's content (None: not there, or not a regular file read whole)."""

    fingerprint: str
    reason: str | None
    files: dict[str, str]
    contents: dict[str, str | None] = {}


def survey(root: Path) -> Survey:
    """The fingerprint of root's trust-relevant files, each file's digest, and why it cannot be trusted."""
    root = root.resolve()
    reason = refusal(root)
    h = hashlib.sha256(b"forge-lsp trust v2")
    if reason is not None:
        h.update(b"\0refused\0" + reason.encode("utf-8", "surrogateescape"))
    files: dict[str, str] = {}
    contents: dict[str, str | None] = {}
    for path in trust_files(root):  # every file in full: .forge.toml, each template, the scripts
        own = hashlib.sha256()
        rel = _rel(path, root)
        contents[rel] = _digest_file(_Tee(h, own), path, root)
        files[rel] = own.hexdigest()
    return Survey(h.hexdigest(), reason, files, contents)


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


SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class EditorTrust:
    """An editor's own word that the user trusts the workspace, and what it covers.

    covers: the files the editor's own trust store hashed, by path relative to the root, each with the sha256 of
    its content (Neovim's vim.secure lists .forge.toml alone); None when the word is for the whole folder
    (VS Code's workspace.isTrusted). It trusts a workspace only where it covers every trust-relevant file as
    it is now, and then it is recorded with the server's own fingerprint (TrustStore.adopt): from then on that
    fingerprint decides, as for any other way of trusting.
    """

    source: str
    covers: Mapping[str, str] | None = None

    def covers_all(self, found: Survey) -> bool:
        """Whether this word covers every trust-relevant file found (one missing needs nothing)."""
        if found.reason is not None:
            return False
        if self.covers is None:
            return True
        for rel, digest in found.files.items():
            content = found.contents.get(rel)
            if content is None and digest == _missing_digest(rel):
                continue  # not there: nothing of it to cover
            if content is None or self.covers.get(rel) != content:
                return False
        return True


def _missing_digest(rel: str) -> str:
    """The digest survey() gives a trust-relevant file that is not there."""
    own = hashlib.sha256(b"\0path\0" + rel.encode("utf-8", "surrogateescape"))
    own.update(b"\0missing")
    return own.hexdigest()


def editor_covers(value: Any) -> dict[str, str] | None:
    """initializationOptions.workspaceTrustCovers as a mapping of relative paths to sha256 digests; None when it
    is not one (the word then covers nothing: an editor that names what it covers must name it well)."""
    if not isinstance(value, dict) or not value:
        return None
    out: dict[str, str] = {}
    for rel, digest in value.items():
        if not isinstance(rel, str) or not isinstance(digest, str) or not SHA256.fullmatch(digest.lower()):
            return None
        out[rel] = digest.lower()
    return out


class TrustStore:
    """The user's trust decisions: folder -> fingerprint of its trust-relevant files, or revoked."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or store_path()

    def _read(self) -> dict[str, Any]:
        folders = read_table(self.path, "workspaces", MAX_STORE_BYTES, "trust store", "no workspace is trusted")
        return folders if folders is not None else {}

    def _write(self, folders: dict[str, Any]) -> None:
        write_json(self.path, {"version": VERSION, "workspaces": folders}, ".trust-")

    def state(self, root: Path) -> str:
        """TRUSTED, CHANGED (trusted once, a trust-relevant file changed since) or UNTRUSTED (revoked too)."""
        return self.check(root)[0]

    def check(self, root: Path) -> tuple[str, Survey | None]:
        """state() and the survey it compared (None when root was never trusted, or revoked)."""
        entry = self._read().get(str(root.resolve()))
        if not isinstance(entry, dict) or entry.get("revoked"):
            return UNTRUSTED, None
        found = survey(root)
        if found.reason is not None:  # never trusted, whatever was recorded
            return CHANGED, found
        return (TRUSTED if entry.get("fingerprint") == found.fingerprint else CHANGED), found

    def revoked(self, root: Path) -> bool:
        """Whether the user revoked root's trust (forge-lsp trust --revoke, forge.trust {revoke}) and has not
        trusted it since: no editor's own word counts for it then."""
        entry = self._read().get(str(root.resolve()))
        return isinstance(entry, dict) and bool(entry.get("revoked"))

    def is_trusted(self, root: Path) -> bool:
        """Whether the user trusts root as its trust-relevant files are now."""
        return self.state(root) == TRUSTED

    def trust(self, root: Path, found: Survey | None = None, source: str | None = None) -> str:
        """Record root as trusted with its current files (found: as surveyed then); returns the fingerprint.

        source: the editor whose own word this records (TrustStore.adopt); None: the user's decision here.
        Raises NotTrustable (nothing recorded) when refusal() says why root cannot be trusted.
        """
        found = found or survey(root)
        if found.reason is not None:
            raise NotTrustable(f"{root.resolve()} cannot be trusted: {found.reason}")  # as cannot_trust() says it
        folders = self._read()
        entry: dict[str, Any] = {"fingerprint": found.fingerprint, "trustedAt": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if source is not None:
            entry["source"] = source
        folders[str(root.resolve())] = entry
        self._write(folders)
        return found.fingerprint

    def adopt(self, root: Path, editor: EditorTrust) -> bool:
        """Record an editor's own word for root (True) when the user has made no decision here (never trusted
        nor revoked) and the word covers every trust-relevant file as it is now. Any decision recorded wins:
        a fingerprint the files no longer match asks again, a revoke stays."""
        if str(root.resolve()) in self._read():
            return False
        found = survey(root)
        if not editor.covers_all(found):
            return False
        self.trust(root, found, source=editor.source)
        log.info("%s: trusted as %s trusts it (its files as they are now)", root, editor.source)
        return True

    def revoke(self, root: Path) -> bool:
        """The user no longer trusts root: recorded as revoked (so no editor's own word trusts it again; trusting
        it here does). True when it was trusted before."""
        folders = self._read()
        before = folders.get(str(root.resolve()))
        folders[str(root.resolve())] = {"revoked": True, "revokedAt": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(folders)
        return isinstance(before, dict) and not before.get("revoked")
