"""forge-lsp's command line: `main` is the console script (pyproject.toml) and `python -m forge_lsp`."""

from forge_lsp.cli.app import main

__all__ = ["main"]
