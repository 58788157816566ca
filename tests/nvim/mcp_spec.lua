-- Issue 26, Neovim: mcp_servers in setup() reach the server; :ForgeMcp lists the servers (state,
-- source, tools) and restarts one (`r` on its line, or :ForgeMcp restart NAME); :checkhealth forge
-- lists them. The real server, with mcp-server-time (PyPI) and a server that exits at once.
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, out, notes, noted, wait = t.ws, t.out, t.notes, t.noted, t.wait
local python = os.getenv("FORGE_PYTHON")
t.deadline(100000)

local function buffer_text(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local ok, err = xpcall(function()
  local mcp = require("forge.mcp")

  -- 1. The buffer's lines from an answer, without a server (nor setup() yet: "editor" is the settings):
  -- state, source, tools; a failed one's reason.
  local lines, owners = mcp.lines({
    servers = {
      { name = "time", state = "ready", source = "editor", tools = { { name = "get_current_time", description = "Get the time\nin a zone" } } },
      { name = "broken", state = "failed", source = "workspace", reason = "exited with code 3", tools = {} },
    },
  })
  assert(lines[1] == "time  ready (1 tool)  (settings mcpServers)", vim.inspect(lines))
  assert(lines[2] == "  get_current_time  Get the time · in a zone", vim.inspect(lines))
  assert(owners[1] == "time" and owners[2] == "time" and owners[3] == nil, vim.inspect(owners))
  assert(lines[4] == "broken  failed: exited with code 3  (.mcp.json)" and owners[4] == "broken", vim.inspect(lines))
  assert(lines[#lines]:find("r: restart", 1, true), vim.inspect(lines))
  assert(mcp.state_text({ name = "time", state = "ready", tools = 2 }) == "ready (2 tools)", "a number of tools")
  local none = mcp.lines({ servers = {} })
  assert(#none == 1 and none[1]:find("No MCP servers configured", 1, true), vim.inspect(none))

  -- 2. setup()'s mcp_servers are the server's settings.mcpServers.
  local forge = require("forge")
  forge.setup({
    cmd = { python, "-m", "forge_lsp" },
    mcp_servers = {
      time = { command = python, args = { "-m", "mcp_server_time", "--local-timezone", "UTC" } },
      broken = { command = python, args = { "-c", "import sys; sys.exit(3)" } },
    },
  })
  vim.cmd("edit " .. ws .. "/main.py")
  wait(30000, "no server", function()
    local c = forge.get_client()
    return c ~= nil and c.initialized
  end)
  local client = forge.get_client()
  assert(client.config.init_options.settings.mcpServers.time.command == python, vim.inspect(client.config.init_options))

  -- 3. :ForgeMcp: the buffer lists both, time ready with its tools, broken failed with a reason.
  local listed = nil
  local function list()
    listed = t.answer(20000, ":ForgeMcp did not answer", forge.mcp_servers)
  end
  wait(30000, "the servers did not settle", function()
    list()
    local text = buffer_text("forge://mcp")
    return text:find("time  ready", 1, true) ~= nil and text:find("broken  failed", 1, true) ~= nil
  end)
  local text = buffer_text("forge://mcp")
  out("MCP BUFFER\n" .. text)
  assert(text:find("\n  mcp_time_get_current_time  Get current time", 1, true) and text:find("\n  mcp_time_convert_time  ", 1, true), text)
  assert(vim.api.nvim_buf_get_name(0):find("forge://mcp", 1, true), "the list is not the current window")

  -- 3b. :ForgeStatus says which MCP server failed (its tools are absent from every turn).
  vim.cmd("ForgeStatus")
  wait(20000, ":ForgeStatus did not answer", function()
    return noted("Forge: idle · model ") ~= nil
  end)
  local said = noted("Forge: idle · model ").msg
  assert(said:find(" · MCP failed: broken (:ForgeMcp)", 1, true) and not said:find("time", 1, true), said)

  -- 4. `r` on the time server's lines restarts it; it is ready again.
  local row = nil
  for i, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if line:find("  mcp_time_convert_time", 1, true) then
      row = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  vim.api.nvim_feedkeys("r", "x", false)
  wait(20000, "r did not restart time", function()
    return noted("Forge: MCP server time ") ~= nil
  end)
  assert(noted("Forge: restarting MCP server time"), vim.inspect(notes))
  wait(30000, "time is not ready after its restart", function()
    list()
    return buffer_text("forge://mcp"):find("time  ready (2 tools)", 1, true) ~= nil
  end)

  -- 5. :ForgeMcp restart NAME; without a name, a one-line hint.
  vim.cmd("ForgeMcp restart")
  assert(noted("which MCP server?"), vim.inspect(notes))
  vim.cmd("ForgeMcp restart broken")
  wait(20000, ":ForgeMcp restart broken did not answer", function()
    return noted("Forge: MCP server broken ") ~= nil
  end)

  -- 6. :checkhealth forge lists the servers: time OK, broken an error with its reason.
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  out("HEALTH\n" .. report)
  assert(report:find("MCP servers", 1, true), report)
  local time_line, broken_line
  for _, l in ipairs(vim.split(report, "\n")) do
    if l:find("time: ready", 1, true) then
      time_line = l
    elseif l:find("broken: failed", 1, true) then
      broken_line = l
    end
  end
  assert(time_line and time_line:find("OK", 1, true) and time_line:find("(mcp_servers in setup())", 1, true), report)
  assert(broken_line and broken_line:find("ERROR", 1, true), report)
end, debug.traceback)

out(ok and "PASS" or ("FAIL " .. tostring(err)))
vim.cmd(ok and "qa!" or "cquit!")
