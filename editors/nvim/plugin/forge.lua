-- forge.nvim: the :Forge* commands exist from startup (they start the server on first use).
-- Opening a file below a .forge.toml starts it after require("forge").setup{...} (0.7+) or
-- vim.lsp.enable("forge") (0.11+, with lsp/forge.lua).
if vim.g.loaded_forge then
  return
end
vim.g.loaded_forge = true
require("forge").create_commands()
-- A forge client whose config replaced on_init (vim.lsp.config("forge", { on_init = ... })) still gets its code
-- action requests widened to every namespace's diagnostics (Neovim 0.8+ has LspAttach; 0.7 sends them all).
if vim.fn.exists("##LspAttach") == 1 then
  vim.api.nvim_create_autocmd("LspAttach", {
    group = vim.api.nvim_create_augroup("forge-code-actions", { clear = true }),
    callback = function(args)
      local client = args.data and vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == "forge" then
        require("forge.actions").widen(client)
      end
    end,
  })
end
