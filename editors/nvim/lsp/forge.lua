-- Neovim 0.11+: vim.lsp.config("forge", { ... }) overrides any of these; vim.lsp.enable("forge")
-- starts forge-lsp for files below a .forge.toml (a plain git repository starts nothing).
local forge = require("forge")
local config = require("forge.config")

---@type vim.lsp.Config
return {
  -- forge-lsp from PATH, else the one in the virtual environment of the clone this plugin is in (.venv)
  cmd = config.server_cmd({ "forge-lsp" }),
  root_markers = { ".forge.toml" },
  workspace_required = true,
  init_options = { settings = vim.empty_dict() },
  settings = { forge = vim.empty_dict() },
  handlers = forge.handlers,
  before_init = forge.before_init,
  on_init = forge.on_init,
}
