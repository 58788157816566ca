-- forge.nvim is configured with require("forge").setup{...}; nothing starts before that.
if vim.g.loaded_forge then
  return
end
vim.g.loaded_forge = true
