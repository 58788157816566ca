-- forge.nvim: a thin Neovim client of forge-lsp. All agent logic stays in the server.
-- Works on Neovim 0.7 (vim.lsp.start_client) and 0.11 (vim.lsp.start / vim.lsp.config).
-- This module is the plugin's API (:help forge-lua); its parts are in lua/forge/ by subject.
local actions = require("forge.actions")
local clients = require("forge.client")
local commands = require("forge.commands")
local config = require("forge.config")
local events = require("forge.events")
local log = require("forge.log")
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

-- What the :Forge commands do; each takes, last, an optional callback with the server's answer.
M.run = commands.run
M.cancel = commands.cancel
M.continue = commands.continue
M.status = commands.status
M.new_conversation = commands.new_conversation
M.conversations = commands.conversations
M.show_config = commands.show_config
M.trust = commands.trust
M.undo_turn = commands.undo_turn
M.code_action = actions.code_action
M.diagnostics = actions.diagnostics
M.command = require("forge.slash").run
M.set_agent = require("forge.agents").select
M.open_log = log.open
M.mcp_servers = require("forge.mcp").show
M.restart_mcp_server = require("forge.mcp").restart
M.create_commands = commands.create

M.find_root = roots.find_root
M.get_client = clients.get

-- For a client config of one's own (lsp/forge.lua).
M.handlers = clients.handlers
M.before_init = clients.before_init
M.on_init = clients.on_init

return M
