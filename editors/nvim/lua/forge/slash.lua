-- Forge commands (/review, /test, /explain, the user's and a trusted workspace's own): :ForgeCommand
-- name args runs "/name args" (the server expands it, forge.run), with completion of the names (those
-- forge.listCommands answered, from the commands' files until it has). :ForgeCommand alone picks one
-- (vim.ui.select) and asks for its arguments.
local clients = require("forge.client")
local definitions = require("forge.definitions")
local notify_mod = require("forge.notify")

local M = {}

local notify = notify_mod.notify
local BUILTIN = { "explain", "review", "test" }

local function names_of(result)
  local names = {}
  for _, c in ipairs(type(result) == "table" and result.commands or {}) do
    if type(c.name) == "string" then
      table.insert(names, c.name)
    end
  end
  return names
end

local listing = definitions.listing("forge.listCommands", names_of)

--- A command name as the server takes it (commands.py NAME).
local function valid(name)
  return type(name) == "string" and #name <= 64 and name:match("^[%w][%w_-]*$") ~= nil
end

--- Without the server's word: the built-in commands, the user's and the workspace's (names from their
--- files' front matter `name:`, else the file's name; a workspace's even when it is not trusted, which
--- the server says when one is run).
local function from_files(root)
  local names, seen = {}, {}
  for _, name in ipairs(BUILTIN) do
    seen[name] = true
    table.insert(names, name)
  end
  local folders = { definitions.user_dir("commands"), root and (root .. "/.forge/commands") or nil }
  for _, folder in ipairs(folders) do
    for _, file in ipairs(definitions.read(folder, "name")) do
      local name = file.value or file.stem
      if file.front and valid(name) and not seen[name] then -- the server loads none without front matter
        seen[name] = true
        table.insert(names, name)
      end
    end
  end
  return names
end

--- The prompt that runs a command: "/name" and its arguments, if any ("/name" given with its slash too).
--- The workspace was trusted (its .forge/commands/ now count): ask the server for its list again.
function M.forget(client)
  listing.forget(client)
end

function M.prompt(name, args)
  name = tostring(name):gsub("^/", "")
  args = vim.trim(args or "")
  return args ~= "" and ("/" .. name .. " " .. args) or ("/" .. name)
end

--- :ForgeCommand <Tab>, never waiting: the names that start with what is typed (only for the first
--- argument), of those the buffer's server listed last (asked again in the background), else, before it
--- has answered or started, of the commands' files (see from_files).
function M.complete(arglead, cmdline, _)
  local before = cmdline:match("^%S*%s+(.*)$") or ""
  if before:find("%s") then
    return {} -- past the name: its arguments are free text
  end
  local typed = arglead:gsub("^/", "")
  local names = {}
  for _, name in ipairs(listing.names(from_files)) do
    if vim.startswith(name, typed) then
      table.insert(names, name)
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
  clients.execute("forge.listCommands", nil, function(result, client)
    listing.keep(client, result)
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

return M
