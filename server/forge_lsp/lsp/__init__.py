"""The pygls glue: commands, progress, diagnostics and notifications."""
