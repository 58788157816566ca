"""forge-lsp as an Agent Client Protocol agent (`forge-lsp acp`): the same runtime behind ACP."""
