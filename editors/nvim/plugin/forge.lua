-- forge.nvim: the :Forge* commands exist from startup (they start the server on first use).
-- Opening a file below a .forge.toml starts it after require("forge").setup{...} (0.7+) or
-- vim.lsp.enable("forge") (0.11+, with lsp/forge.lua).
if vim.g.loaded_forge then
  return
end
vim.g.loaded_forge = true
require("forge").create_commands()
