-- :ForgeMcp — the workspace's MCP servers (forge.mcpServers): each one's state, where it was
-- configured and its tools, in a scratch buffer; `r` on a server's lines (or :ForgeMcp restart NAME)
-- restarts it (forge.restartMcpServer).
local clients = require("forge.client")
local notify_mod = require("forge.notify")
local scratch = require("forge.scratch")

local M = {}

local notify, one_line = notify_mod.notify, notify_mod.one_line
local levels = vim.log.levels

local BUFFER = "forge://mcp"

-- Where a server is configured (forge.mcpServers' source), as a person reads it.
local SOURCES = {
  user = "~/.config/forge-lsp/mcp.json",
  workspace = ".mcp.json",
  session = "the ACP session",
}

function M.source_text(source)
  if source == nil or source == vim.NIL then
    return nil
  elseif source == "editor" then
    return require("forge.config").did_setup and "mcp_servers in setup()" or "settings mcpServers"
  end
  return SOURCES[source] or tostring(source)
end

--- A server's state as a person reads it: "ready (2 tools)", "failed: reason", "starting", "disabled".
function M.state_text(server)
  local state = tostring(server.state or "unknown")
  -- forge.mcpServers lists the tools; forge.status and forge.restartMcpServer give their number.
  local tools = type(server.tools) == "table" and #server.tools or tonumber(server.tools)
  if state == "ready" then
    return string.format("ready (%d tool%s)", tools or 0, tools == 1 and "" or "s")
  end
  local reason = server.reason ~= nil and server.reason ~= vim.NIL and one_line(tostring(server.reason)) or nil
  if reason and reason ~= "" then
    return state .. ": " .. reason
  end
  return state
end

--- The lines of the :ForgeMcp buffer, and for each line the server it belongs to (nil: none).
function M.lines(result)
  local servers = type(result) == "table" and type(result.servers) == "table" and result.servers or {}
  local lines, owners = {}, {}
  local function add(line, name)
    table.insert(lines, line)
    owners[#lines] = name
  end
  if #servers == 0 then
    add("No MCP servers configured (mcpServers in ~/.config/forge-lsp/mcp.json, .mcp.json, or mcp_servers in setup()).")
    return lines, owners
  end
  for i, server in ipairs(servers) do
    local name = tostring(server.name)
    if i > 1 then
      add("", nil)
    end
    local source = M.source_text(server.source) and ("  (" .. M.source_text(server.source) .. ")") or ""
    add(name .. "  " .. M.state_text(server) .. source, name)
    for _, tool in ipairs(type(server.tools) == "table" and server.tools or {}) do
      local description = tool.description ~= nil and tool.description ~= vim.NIL and one_line(tostring(tool.description)) or ""
      add("  " .. tostring(tool.name) .. (description ~= "" and ("  " .. description) or ""), name)
    end
  end
  add("", nil)
  add("r: restart the server under the cursor · R: refresh · q: close", nil)
  return lines, owners
end

-- The server each line of the buffer belongs to (the buffer is rewritten on each refresh).
local owners_of = {}

--- forge.restartMcpServer {name}; on_result(answer) after it is told, and the list refreshed.
function M.restart(name, on_result)
  if not name or name == "" then
    notify("Forge: which MCP server? :ForgeMcp restart NAME", levels.WARN)
    return
  end
  notify("Forge: restarting MCP server " .. name)
  clients.execute("forge.restartMcpServer", { name = name }, function(result)
    local state = type(result) == "table" and M.state_text(result) or "restarted"
    notify("Forge: MCP server " .. name .. " " .. state)
    if vim.fn.bufnr(BUFFER) ~= -1 and vim.fn.bufwinnr(BUFFER) ~= -1 then
      M.show()
    end
    if on_result then
      on_result(result)
    end
  end)
end

--- Fill the :ForgeMcp buffer with result and show it (focus = false: only fill it, where it is).
local function render(result, focus)
  local buf = scratch.buffer(BUFFER, "forgemcp")
  local lines, owners = M.lines(result)
  owners_of[buf] = owners
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.keymap.set("n", "r", function()
    local name = (owners_of[buf] or {})[vim.api.nvim_win_get_cursor(0)[1]]
    if name then
      M.restart(name)
    else
      notify("Forge: put the cursor on a server's lines to restart it")
    end
  end, { buffer = buf, nowait = true, desc = "Restart the MCP server under the cursor" })
  vim.keymap.set("n", "R", function()
    M.show()
  end, { buffer = buf, nowait = true, desc = "Refresh the MCP servers" })
  if focus ~= false then
    scratch.show(buf)
  end
  return buf
end

--- :ForgeMcp: list the servers; on_result(answer of forge.mcpServers) after they are shown.
function M.show(on_result)
  clients.execute("forge.mcpServers", nil, function(result)
    render(result)
    if on_result then
      on_result(result)
    end
  end)
end

--- The list again where it is shown (a window has forge://mcp), the cursor left where it is: an MCP
--- server that failed (the server's message "Forge: MCP server NAME failed: ...") is not left "ready".
function M.refresh_if_shown()
  local buf = vim.fn.bufnr(BUFFER)
  if buf == -1 or #vim.fn.win_findbuf(buf) == 0 then
    return
  end
  clients.execute("forge.mcpServers", nil, function(result)
    if vim.api.nvim_buf_is_valid(buf) then
      render(result, false)
    end
  end)
end

--- The :ForgeMcp command: no argument lists; "restart NAME" restarts one.
function M.command(o)
  local args = vim.split(vim.trim(o.args or ""), "%s+", { trimempty = true })
  if #args == 0 or args[1] == "list" then
    M.show()
  elseif args[1] == "restart" then
    M.restart(args[2])
  else
    notify("Forge: :ForgeMcp takes nothing, list, or restart NAME (got " .. o.args .. ")", levels.WARN)
  end
end

function M.complete(arglead, cmdline)
  if cmdline:match("^%s*%S+%s+restart%s") then
    return {}
  end
  return vim.tbl_filter(function(word)
    return word:sub(1, #arglead) == arglead
  end, { "list", "restart" })
end

return M
