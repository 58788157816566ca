"""The exit codes of forge-lsp run and demo (docs/cli.md): imports nothing, so anything may import it."""

EXIT_COMPLETED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_CANCELLED = 0, 1, 3, 130
EXIT_CODES = {"completed": EXIT_COMPLETED, "interrupted": EXIT_INTERRUPTED, "failed": EXIT_FAILED, "cancelled": EXIT_CANCELLED}
EXIT_USAGE = EXIT_FAILED
"""Bad input to the command line (an empty prompt, a missing folder, an unknown option): one line on stderr."""
