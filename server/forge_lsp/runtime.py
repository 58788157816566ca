"""Moved to forge_lsp.core.runtime (kept while the frontends move over)."""

from forge_lsp.core.errors import NoModel, TurnInProgress
from forge_lsp.core.runtime import WorkspaceRuntime

__all__ = ["NoModel", "TurnInProgress", "WorkspaceRuntime"]
