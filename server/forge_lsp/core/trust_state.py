"""One workspace's trust as the user's trust store, the client's word and the files say (DESIGN "Trust")."""

from __future__ import annotations

import logging
from pathlib import Path

from forge_lsp.config import ConfigLoader
from forge_lsp.domain.config import WORKSPACE_FILE
from forge_lsp.trust import (
    MCP_FILE,
    TRUSTED_DIRS,
    EditorTrust,
    Survey,
    TrustStore,
    cannot_trust,
    save_keeps_trust,
    text_digest,
    unchanged_but,
    watched_files,
)

log = logging.getLogger(__name__)


class TrustState:
    """Whether a workspace is trusted: the user's store, the client's word for this process, the editor's
    word, and the trust-relevant files as the last check found them."""

    def __init__(
        self,
        root: Path,
        loader: ConfigLoader,
        *,
        trusted: bool | None = None,
        trust_store: TrustStore | None = None,
        editor_trust: EditorTrust | None = None,
    ) -> None:
        self.root = root
        self.loader = loader
        self.store = trust_store or TrustStore()
        self._client_trusted = trusted is True
        self._editor_trust = editor_trust
        if editor_trust is not None:
            try:
                self.store.adopt(self.root, editor_trust)
            except Exception as exc:  # an unreadable store, a file that cannot be trusted: the store decides
                log.warning("trust store: %s", exc)
        self._trusted_files: dict[str, str] | None = None
        """Each trust-relevant file's digest when the store last said trusted (a user's save is checked against it)."""
        self._survey: Survey | None = None
        """The trust-relevant files as the last trust check found them."""

    def is_trusted(self) -> bool:
        """Trusted as the files are, or still so for a .forge.toml that no longer parses: its last good
        (trusted) config stays in force, as the problem says, while nothing else trust covers changed."""
        state = self.state()
        if state == "trusted":
            return True
        if state != "changed" or not self.loader.last_good_trusted or self._trusted_files is None:
            return False
        found = self._survey
        if found is None:
            return False
        return unchanged_but(self.root, self._trusted_files, found, WORKSPACE_FILE) and not self.loader.workspace_parses()

    def state(self) -> str:
        """ "trusted", "changed" (trusted once; a trust-relevant file changed since) or "untrusted".

        The client's word counts only for a workspace that can be trusted at all (the check
        `forge-lsp trust` makes: client_trust_refused says why not)."""
        if self._client_trusted and self.client_trust_refused() is None:
            return "trusted"
        try:
            state, found = self.store.check(self.root)
        except Exception as exc:  # an unreadable store trusts nothing
            log.warning("trust store: %s", exc)
            return "untrusted"
        self._survey = found
        if state == "trusted" and found is not None:
            self._trusted_files = found.files
        elif state == "untrusted":
            self._trusted_files = None
        return state

    def workspace_files(self) -> tuple[list[Path], list[Path]]:
        """The workspace's files trust covers (.forge.toml, .mcp.json, the scripts and every other file of the last
        trust check) and its .forge/ definition folders."""
        return watched_files(self.root, self._survey), [self.root / folder for folder in TRUSTED_DIRS]

    def is_trust_file(self, path: Path) -> str | None:
        """path relative to the root when trust covers it: .forge.toml, .mcp.json, a template, an agent, a command,
        a trusted file (the script)."""
        try:
            rel = (path.parent.resolve() / path.name).relative_to(self.root).as_posix()
        except (OSError, RuntimeError, ValueError):
            return None
        if (
            rel in (WORKSPACE_FILE, MCP_FILE)
            or rel.startswith(tuple(folder.as_posix() + "/" for folder in TRUSTED_DIRS))
            or rel in (self._trusted_files or {})
        ):
            return rel
        return None

    def is_trusted_text(self, rel: str, text: str) -> bool:
        """Whether text is what rel held when the user last trusted the workspace."""
        return self._trusted_files is not None and self._trusted_files.get(rel) == text_digest(rel, text.encode())

    def keep_trust_after_save(self, rel: str, text: str) -> bool:
        """The user saved text to rel in the editor: when that is the only change since they trusted
        the workspace, record the trust again (True). Anything else changed, and it asks again."""
        if self._client_trusted or self._trusted_files is None:
            return False
        try:
            state, found = self.store.check(self.root)
            if state != "changed" or found is None or not save_keeps_trust(self._trusted_files, found, rel, text.encode()):
                return False
            self.store.trust(self.root, found)
        except Exception as exc:  # an unreadable store, a file that cannot be trusted: asked again
            log.warning("trust store: %s", exc)
            return False
        self._trusted_files = found.files
        log.info("%s: saved in the editor by the user; %s stays trusted", rel, self.root)
        return True

    def client_trust_refused(self) -> str | None:
        """Why the client's trust (VS Code's workspace.isTrusted, `run --trust`) does not apply: the
        workspace cannot be trusted as it is (see trust.refusal); None when it applies or was not given."""
        return cannot_trust(self.root) if self._client_trusted or self._editor_trust else None

    def record(self, trusted: bool) -> None:
        """The user's decision (forge.trust, the Trust button), recorded in the store."""
        if trusted:
            self.store.trust(self.root)
        else:
            self.store.revoke(self.root)
            self._client_trusted = False
