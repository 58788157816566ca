-- :ForgeAgent: which agent the conversation uses (forge.setAgent), picked from the server's list
-- (forge.listAgents), the ids completed with <Tab> (from the agents' files until the server has answered).
local clients = require("forge.client")
local definitions = require("forge.definitions")
local events = require("forge.events")
local notify = require("forge.notify").notify

local M = {}

local BUILTIN = { "forge", "muse", "sage" }

local function ids_of(result)
  local ids = {}
  for _, agent in ipairs(type(result) == "table" and result.agents or {}) do
    table.insert(ids, agent.id)
  end
  return ids
end

local listing = definitions.listing("forge.listAgents", ids_of)

local function valid(id)
  return type(id) == "string" and #id <= 64 and id:match("^[%w][%w_.-]*$") ~= nil
end

--- The agent ids of folder's files: each one's front matter `id:`, else its name.
local function folder_ids(folder)
  local ids = {}
  for _, file in ipairs(definitions.read(folder, "id")) do
    table.insert(ids, valid(file.value) and file.value or file.stem)
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
  for _, list in ipairs({ folder_ids(definitions.user_dir("agents")), root and folder_ids(root .. "/.forge/agents") or {} }) do
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

--- The workspace was trusted (its .forge/agents/ now count): forget the server's last list and ask for
--- it again at once, so that the next <Tab> has the workspace's agents, not the list from before.
function M.forget(client)
  listing.forget(client)
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
    listing.keep(client, result)
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
  local found = {}
  for _, id in ipairs(listing.names(from_files)) do
    if id:sub(1, #arglead) == arglead then
      table.insert(found, id)
    end
  end
  return found
end

return M
