"""The config files in ACP, where no client says a file changed: checked on disk (core/file_poll.py) while the
agent runs. The user's config.toml, mcp.json, agents/ and commands/, the trust store, and each open workspace's
.forge.toml, .mcp.json and .forge/templates|agents|commands are read again within about POLL_SECS of a change;
each session of a workspace whose commands changed gets available_commands_update, and a workspace that lost
its trust says so at its sessions' next prompt."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forge_lsp.acp.commands import commands_key
from forge_lsp.core.file_poll import TRUST, USER, Change, FilePoll, Group, config_groups

if TYPE_CHECKING:
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.core.workspaces import Workspaces

log = logging.getLogger(__name__)


class ConfigFiles:
    """The agent's open workspaces' config files, checked in the background; changed() tells the sessions."""

    def __init__(
        self,
        workspaces: Workspaces,
        commands_changed: Callable[[WorkspaceRuntime], Awaitable[None]],
        trust_lost: Callable[[WorkspaceRuntime], None],
    ) -> None:
        self.workspaces = workspaces
        self.commands_changed = commands_changed
        self.trust_lost = trust_lost
        self.told: dict[Path, list[Any]] = {}
        """Per workspace, the commands its sessions were last told (commands_key)."""
        self.poll = FilePoll(self.files, self.changed)
        self.task: asyncio.Task[None] | None = None
        self.pending: set[asyncio.Task[None]] = set()

    def watch(self, runtime: WorkspaceRuntime) -> None:
        """A session of runtime's workspace was told its commands: check its files (and the user's) from now."""
        self.told[runtime.root] = commands_key(runtime)
        self.poll.round()  # its files as they are now are noted: a change is one after this
        if self.task is None:
            self.task = asyncio.ensure_future(self.poll.run())

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    def watched(self) -> list[WorkspaceRuntime]:
        """The open workspaces whose sessions were told their commands."""
        return [runtime for runtime in self.workspaces if runtime.root in self.told]

    def files(self) -> Iterator[Group]:
        return config_groups(self.watched())

    def changed(self, key: Hashable, changed: list[tuple[Path, Change]]) -> None:
        runtimes = self.watched()
        if key == TRUST:
            runtimes = [runtime for runtime in runtimes if runtime.trust_changed()]
        else:
            log.info("config: %s changed on disk; read again", ", ".join(str(path) for path, _ in changed))
            if key != USER:
                runtimes = [runtime for runtime in runtimes if runtime.root == key]
        for runtime in runtimes:
            was_trusted = runtime.trusted
            try:
                runtime.reload_config()
                if key not in (USER, TRUST):
                    runtime.reload_templates()
            except Exception:  # a bad file is the config's to report (at the next prompt); never the check's end
                log.exception("%s: reading the config again", runtime.root)
                continue
            if was_trusted and not runtime.trusted:
                log.info("%s is no longer trusted: its workspace settings are ignored", runtime.root)
                self.trust_lost(runtime)
            if commands_key(runtime) != self.told.get(runtime.root):
                self.told[runtime.root] = commands_key(runtime)
                log.info("%s: the commands changed; telling its sessions", runtime.root)
                task = asyncio.ensure_future(self.commands_changed(runtime))
                self.pending.add(task)
                task.add_done_callback(self.pending.discard)
