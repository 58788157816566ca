"""The registry of open workspaces: one runtime per root, whichever frontend asks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the frontend's opener imports the runtime, when the first workspace opens
    from forge_lsp.core.runtime import WorkspaceRuntime


class Workspaces:
    """One WorkspaceRuntime per workspace root, made on first use by the frontend's ``open``
    (which wires its files, questions and notices) and closed together."""

    def __init__(self, open: Callable[[Path], WorkspaceRuntime]) -> None:
        self._open = open
        self._runtimes: dict[Path, WorkspaceRuntime] = {}

    def get(self, root: Path) -> WorkspaceRuntime:
        """The runtime of this root (resolved), opened now if it is not yet."""
        key = root.resolve()
        runtime = self._runtimes.get(key)
        if runtime is None:
            runtime = self._runtimes[key] = self._open(key)
        return runtime

    def find(self, root: Path) -> WorkspaceRuntime | None:
        """The runtime of this root if it is open, else None (nothing is opened)."""
        return self._runtimes.get(root.resolve())

    def __iter__(self) -> Iterator[WorkspaceRuntime]:
        return iter(list(self._runtimes.values()))

    def __len__(self) -> int:
        return len(self._runtimes)

    def running(self, turn_id: str | None = None) -> WorkspaceRuntime | None:
        """The runtime whose turn runs (turn_id's, when given): the first one found; None when none does."""
        return next((r for r in self if r.running and (not turn_id or r.turn_id == turn_id)), None)

    def cancel(self, turn_id: str | None = None) -> bool:
        """Cancel a running turn (turn_id's, when given): the first one found; True if one was."""
        return any(runtime.cancel(turn_id) for runtime in self)

    def close_all(self) -> None:
        """Cancel running turns and close every workspace's state."""
        for runtime in self:
            runtime.close()
