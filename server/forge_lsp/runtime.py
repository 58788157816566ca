"""Moved to forge_lsp.core.runtime (kept while the frontends move over)."""

from forge_lsp.core.runtime import NoModel, TurnInProgress, WorkspaceRuntime

__all__ = ["NoModel", "TurnInProgress", "WorkspaceRuntime"]
