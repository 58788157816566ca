"""Pure domain types of forge-lsp: no IO, no pygls, no litellm."""
