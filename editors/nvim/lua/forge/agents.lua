-- :ForgeAgent: which agent the conversation uses (forge.setAgent), picked from the server's list
-- (forge.listAgents), the ids completed with <Tab> (from the agents' files until the server has answered).
local clients = require("forge.client")
local events = require("forge.events")
local notify = require("forge.notify").notify
local roots = require("forge.roots")

local M = {}

local BUILTIN = { "forge", "muse", "sage" }
local MAX_FILES = 200 -- as the server reads at most (frontmatter.py MAX_DEFINITION_FILES)
local listed = {} -- by client id: the ids that server listed last
local asking = {} -- client ids with a forge.listAgents on its way
local answered_at = {} -- by client id: when (uv.now(), ms) that server listed them
local FRESH_MS = 2000 -- a list this recent is not asked for again (completion may be asked on every key)

local uv = vim.uv or vim.loop

local function ids_of(result)
  local ids = {}
  for _, agent in ipairs(type(result) == "table" and result.agents or {}) do
    table.insert(ids, agent.id)
  end
  return ids
end

--- The user's agents folder, as the server finds it: beside $FORGE_LSP_CONFIG, else
--- $XDG_CONFIG_HOME (~/.config)/forge-lsp/agents.
local function user_dir()
  local file = os.getenv("FORGE_LSP_CONFIG")
  if file and file ~= "" then
    return vim.fn.fnamemodify(file, ":h") .. "/agents"
  end
  local base = os.getenv("XDG_CONFIG_HOME")
  if not base or base == "" then
    base = vim.fn.expand("~/.config")
  end
  return base .. "/forge-lsp/agents"
end

local function valid(id)
  return type(id) == "string" and #id <= 64 and id:match("^[%w][%w_.-]*$") ~= nil
end

--- An agent file's id: its front matter's `id:` line (a glance at the first lines, not a YAML parse:
--- the server parses it), else its name.
local function id_of(path, name)
  local stem = name:gsub("%.md$", "")
  local fd = io.open(path, "rb")
  if not fd then
    return stem
  end
  local head = fd:read(4096) or ""
  fd:close()
  local lines = vim.split(head, "\r?\n")
  if lines[1] ~= "---" then
    return stem
  end
  for i = 2, #lines do
    if lines[i] == "---" then
      break
    end
    local id = lines[i]:match("^id:%s*(.-)%s*$")
    if id then
      id = id:gsub("^([\"'])(.*)%1$", "%2")
      return valid(id) and id or stem
    end
  end
  return stem
end

--- The agent ids of folder's *.md files (at most MAX_FILES of them, by name).
local function folder_ids(folder)
  local names = {}
  local handle = uv.fs_scandir(folder)
  while handle and #names < MAX_FILES do
    local name, kind = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    if name:match("%.md$") and kind ~= "directory" then
      table.insert(names, name)
    end
  end
  table.sort(names)
  local ids = {}
  for _, name in ipairs(names) do
    table.insert(ids, id_of(folder .. "/" .. name, name))
  end
  return ids
end

--- Without the server's word: the built-in agents, the user's, the workspace's (from their files, as
--- the server would load them; a workspace's even when it is not trusted, which the server then says).
--- In the server's order: the built-in ones, then the others sorted.
local function from_files(root)
  local others, seen = {}, {}
  for _, id in ipairs(BUILTIN) do
    seen[id] = true
  end
  for _, list in ipairs({ folder_ids(user_dir()), root and folder_ids(root .. "/.forge/agents") or {} }) do
    for _, id in ipairs(list) do
      if valid(id) and not seen[id] then
        seen[id] = true
        table.insert(others, id)
      end
    end
  end
  table.sort(others)
  return vim.list_extend(vim.deepcopy(BUILTIN), others)
end

--- Ask a running server for its agents in the background (one request at a time): the next <Tab> has them.
local function refresh(client, bufnr)
  if not client.initialized or asking[client.id] or uv.now() - (answered_at[client.id] or -FRESH_MS) < FRESH_MS then
    return
  end
  asking[client.id] = true
  local ok = pcall(clients.ask, client, "forge.listAgents", nil, function(err, result)
    asking[client.id] = nil
    if not err then
      listed[client.id], answered_at[client.id] = ids_of(result), uv.now()
    end
  end, bufnr)
  if not ok then
    asking[client.id] = nil
  end
end

--- The workspace was trusted (its .forge/agents/ now count): forget the server's last list and ask for
--- it again at once, so that the next <Tab> has the workspace's agents, not the list from before.
function M.forget(client)
  if client == nil then
    return
  end
  listed[client.id], answered_at[client.id] = nil, nil
  refresh(client)
end

--- :ForgeAgent ID: the current conversation uses that agent from its next turn; without an id, a
--- pick of every agent. on_result(answer of forge.setAgent) once it is set.
function M.select(id, on_result)
  id = id and vim.trim(id) or ""
  if id == "" then
    return M.pick(on_result)
  end
  clients.execute("forge.setAgent", { id = id }, function(result)
    events.set_agent(result.agent)
    notify("Forge: agent " .. tostring(result.agent) .. " for this conversation")
    if on_result then
      on_result(result)
    end
  end)
end

--- vim.ui.select over forge.listAgents: id, title and what it is for, the current one marked.
function M.pick(on_result)
  clients.execute("forge.listAgents", nil, function(result, client)
    listed[client.id] = ids_of(result)
    events.set_agent(result.current)
    vim.ui.select(result.agents or {}, {
      prompt = "Forge agent (now " .. tostring(result.current) .. ")",
      format_item = function(a)
        local mark = a.id == result.current and " (current)" or ""
        local about = (a.description and a.description ~= "") and (" — " .. a.description) or ""
        return a.id .. mark .. " · " .. tostring(a.title) .. about
      end,
    }, function(choice)
      if choice then
        M.select(choice.id, on_result)
      end
    end)
  end)
end

--- Completion of :ForgeAgent, never waiting: the ids the buffer's server listed last (asked again in
--- the background), else, before it has answered or started, the agents' files (see from_files).
function M.complete(arglead)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = clients.get(bufnr)
  local ids = client and listed[client.id]
  if client then
    refresh(client, bufnr)
  end
  if not ids then
    local root = client and client.config.root_dir
      or roots.find_root(roots.buffer_file(bufnr) or vim.fn.getcwd())
      or vim.fn.getcwd()
    ids = from_files(root)
  end
  local found = {}
  for _, id in ipairs(ids) do
    if id:sub(1, #arglead) == arglead then
      table.insert(found, id)
    end
  end
  return found
end

function M.create()
  vim.api.nvim_create_user_command("ForgeAgent", function(o)
    M.select(o.args)
  end, {
    nargs = "?",
    complete = function(arglead)
      return M.complete(arglead)
    end,
    desc = "Choose the Forge agent of this conversation (forge, muse, sage, ...)",
  })
end

return M
