-- Forge commands (/review, /test, /explain, the user's and a trusted workspace's own): :ForgeCommand
-- name args runs "/name args" (the server expands it, forge.run), with completion of the names from
-- forge.listCommands. :ForgeCommand alone picks one (vim.ui.select) and asks for its arguments.
local clients = require("forge.client")
local notify_mod = require("forge.notify")

local M = {}

local notify = notify_mod.notify
-- How long completion waits for forge.listCommands (a server just started answers within it).
local COMPLETE_TIMEOUT_MS = 3000

--- The prompt that runs a command: "/name" and its arguments, if any ("/name" given with its slash too).
function M.prompt(name, args)
  name = tostring(name):gsub("^/", "")
  args = vim.trim(args or "")
  return args ~= "" and ("/" .. name .. " " .. args) or ("/" .. name)
end

--- The commands of the buffer's workspace, {{name, description, source, agent?}, ...}, asked synchronously
--- (completion cannot wait for a callback); nil when the server does not answer in time.
function M.list_sync(bufnr)
  local client = clients.for_command(bufnr or vim.api.nvim_get_current_buf())
  if not client then
    return nil
  end
  local params = { command = "forge.listCommands", arguments = { vim.empty_dict() } }
  local reply
  if vim.fn.has("nvim-0.11") == 1 then
    reply = client:request_sync("workspace/executeCommand", params, COMPLETE_TIMEOUT_MS, bufnr)
  else
    reply = client.request_sync("workspace/executeCommand", params, COMPLETE_TIMEOUT_MS, bufnr)
  end
  if not reply or reply.err or type(reply.result) ~= "table" then
    return nil
  end
  return reply.result.commands
end

--- :ForgeCommand <Tab>: the command names that start with what is typed (only for the first argument).
function M.complete(arglead, cmdline, _)
  local before = cmdline:match("^%S*%s+(.*)$") or ""
  if before:find("%s") then
    return {} -- past the name: its arguments are free text
  end
  local names = {}
  for _, c in ipairs(M.list_sync() or {}) do
    if type(c.name) == "string" and vim.startswith(c.name, (arglead:gsub("^/", ""))) then
      table.insert(names, c.name)
    end
  end
  table.sort(names)
  return names
end

--- Run a command: name (with or without its slash) and args; without a name, pick one and ask for its
--- arguments. opts and on_result as forge.run's (require("forge").run).
function M.run(name, args, opts, on_result)
  local run = require("forge.commands").run
  if name and vim.trim(name) ~= "" then
    run(M.prompt(name, args), opts, on_result)
    return
  end
  local bufnr = (opts and opts.bufnr) or vim.api.nvim_get_current_buf()
  require("forge.client").execute("forge.listCommands", nil, function(result)
    local list = type(result) == "table" and result.commands or {}
    if #list == 0 then
      notify("Forge: no commands")
      return
    end
    vim.ui.select(list, {
      prompt = "Forge command",
      format_item = function(c)
        local source = c.source == "builtin" and "built-in" or c.source
        local from = c.agent and (source .. ", agent " .. c.agent) or source
        return string.format("/%s · %s (%s)", c.name, c.description or "", from)
      end,
    }, function(choice)
      if not choice then
        return
      end
      if choice.takesArgs == false then -- its prompt uses no {{args}}: nothing to ask
        run(M.prompt(choice.name, ""), vim.tbl_extend("force", opts or {}, { bufnr = bufnr }), on_result)
        return
      end
      vim.ui.input({ prompt = "/" .. choice.name .. " arguments (optional): " }, function(input)
        if input == nil or not vim.api.nvim_buf_is_valid(bufnr) then
          return -- <Esc>: nothing runs
        end
        run(M.prompt(choice.name, input), vim.tbl_extend("force", opts or {}, { bufnr = bufnr }), on_result)
      end)
    end)
  end, bufnr)
end

--- :ForgeCommand [name [args]] (on the selection, if any).
function M.create()
  vim.api.nvim_create_user_command("ForgeCommand", function(o)
    local name, args = o.args:match("^%s*(%S+)%s*(.-)%s*$")
    M.run(name, args, { range = o.range, line1 = o.line1, line2 = o.line2 })
  end, {
    nargs = "*",
    range = true,
    complete = M.complete,
    desc = "Run a Forge command (/review, /test, /explain, your own): :ForgeCommand name args",
  })
  vim.keymap.set("n", "<Plug>(forge-command)", "<Cmd>ForgeCommand<CR>", { silent = true, desc = "Forge: run a command (picked)" })
end

return M
