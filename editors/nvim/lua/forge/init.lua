-- forge.nvim: a thin Neovim client of forge-lsp. All agent logic stays in the server.
-- Works on Neovim 0.7 (vim.lsp.start_client) and 0.11 (vim.lsp.start / vim.lsp.config).
-- This module is the plugin's API (:help forge-lua); its parts are in lua/forge/ by subject.
local actions = require("forge.actions")
local clients = require("forge.client")
local commands = require("forge.commands")
local config = require("forge.config")
local events = require("forge.events")
local roots = require("forge.roots")

local M = {}

--- Options (:help forge-setup-options); a second call merges into what the first set.
function M.setup(opts)
  config.set(opts)
  local group = vim.api.nvim_create_augroup("forge", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      clients.attach(args.buf)
      clients.show_stored_diagnostics(args.buf)
    end,
  })
  config.did_setup = true
  commands.create()
  -- A file opened before setup (e.g. `nvim file` with lazy loading) is attached now.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      clients.attach(buf)
    end
  end
end

M.statusline = events.statusline

-- What the :Forge commands do (each its row of the command table: forge.commands.table()); each takes,
-- last, an optional callback with the server's answer.
for _, row in ipairs(commands.table()) do
  M[row.api] = row.fn
end
M.diagnostics = actions.diagnostics
M.restart_mcp_server = require("forge.mcp").restart
M.create_commands = commands.create

M.find_root = roots.find_root
M.get_client = clients.get

-- For a client config of one's own (lsp/forge.lua).
M.handlers = clients.handlers
M.before_init = clients.before_init
M.on_init = clients.on_init

return M
