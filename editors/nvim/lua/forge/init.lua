-- forge.nvim: a thin Neovim client of forge-lsp. All agent logic stays in the server.
-- Works on Neovim 0.7 (vim.lsp.start_client) and 0.11 (vim.lsp.start / vim.lsp.config).
-- This module is the plugin's API; its parts are in lua/forge/ by subject.
local clients = require("forge.client")
local commands = require("forge.commands")
local config = require("forge.config")
local events = require("forge.events")
local log = require("forge.log")
local prompts = require("forge.prompts")
local roots = require("forge.roots")
local trust = require("forge.trust")

local M = {}

M.config = config.options
M._notify = require("forge.notify").notify
M._client_config = clients.client_config

M.find_root = roots.find_root
M.log = log.append
M.open_log = log.open
M.on_event = events.on_event
M.usage_text = events.usage_text
M.statusline = events.statusline
M.on_message_request = prompts.on_message_request
M.neovim_trusts = trust.neovim_trusts
M.handlers = clients.handlers
M.before_init = clients.before_init
M.start = clients.start
M.get_client = clients.get
M.attach = clients.attach
M.client = clients.for_command
M.run = commands.run
M.cancel = commands.cancel
M.status = commands.status
M.new_conversation = commands.new_conversation
M.conversations = commands.conversations
M.show_config = commands.show_config
M.trust = commands.trust
M.create_commands = commands.create

function M.setup(opts)
  config.set(opts)
  local group = vim.api.nvim_create_augroup("forge", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  config.did_setup = true
  M.did_setup = true
  M.create_commands()
  -- A file opened before setup (e.g. `nvim file` with lazy loading) is attached now.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

return M
