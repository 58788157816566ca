-- :ForgeAgent: which agent the conversation uses (forge.setAgent), picked from the server's list
-- (forge.listAgents), the ids completed with <Tab>.
local clients = require("forge.client")
local events = require("forge.events")
local notify = require("forge.notify").notify

local M = {}

local BUILTIN = { "forge", "muse", "sage" }
local known = nil -- the ids the server listed last

local function ids_of(result)
  local ids = {}
  for _, agent in ipairs(type(result) == "table" and result.agents or {}) do
    table.insert(ids, agent.id)
  end
  return ids
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
  clients.execute("forge.listAgents", nil, function(result)
    known = ids_of(result)
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

--- Completion of :ForgeAgent: the ids the running server lists (the built-in ones when none runs).
function M.complete(arglead)
  local listed = clients.execute_sync("forge.listAgents", nil, 1000)
  if listed then
    known = ids_of(listed)
  end
  local found = {}
  for _, id in ipairs(known or BUILTIN) do
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
