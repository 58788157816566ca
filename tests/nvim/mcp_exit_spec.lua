-- :ForgeMcp open while an MCP server exits by itself: the list says "failed" once the server's message
-- comes ("Forge: MCP server dying failed: ..."), without R, and the cursor stays in the window it was in.
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, out, wait, noted = t.ws, t.out, t.wait, t.noted
local python = os.getenv("FORGE_PYTHON")
t.deadline(60000)

local function buffer_text(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- mcp-server-time, gone once the spec has seen it ready (it writes the file the server waits for): a timer would
-- race a loaded machine, where the server's own start can take longer than the timer.
local GONE = ws .. "/.gone"
local DYING = "import os, runpy, sys, threading, time; P = " .. vim.fn.json_encode(GONE) .. "; "
  .. "threading.Thread(target=lambda: ([time.sleep(0.1) for _ in iter(lambda: os.path.exists(P), True)], os._exit(3)), daemon=True).start(); "
  .. "sys.argv = ['mcp-server-time', '--local-timezone', 'UTC']; runpy.run_module('mcp_server_time', run_name='__main__')"

local ok, err = xpcall(function()
  local forge = require("forge")
  forge.setup({ cmd = { python, "-m", "forge_lsp" }, mcp_servers = { dying = { command = python, args = { "-c", DYING } } } })
  vim.cmd("edit " .. ws .. "/main.py")
  wait(30000, "no server", function()
    local c = forge.get_client()
    return c ~= nil and c.initialized
  end)
  t.answer(20000, ":ForgeMcp did not answer", forge.mcp_servers)
  local text = buffer_text("forge://mcp")
  assert(text:find("dying  ready", 1, true), text)
  vim.cmd("wincmd p") -- back to main.py; the list stays open below
  assert(vim.api.nvim_buf_get_name(0):find("main.py", 1, true), vim.api.nvim_buf_get_name(0))
  vim.fn.writefile({}, GONE) -- the server exits by itself now
  wait(20000, "no message that dying failed", function()
    return noted("Forge: MCP server dying failed") ~= nil
  end)
  wait(5000, "the open list still says ready: " .. buffer_text("forge://mcp"), function()
    return buffer_text("forge://mcp"):find("dying  failed: ", 1, true) ~= nil
  end)
  out("MCP BUFFER\n" .. buffer_text("forge://mcp"))
  assert(vim.api.nvim_buf_get_name(0):find("main.py", 1, true), "the refresh took the cursor: " .. vim.api.nvim_buf_get_name(0))
end, debug.traceback)

out(ok and "PASS" or ("FAIL " .. tostring(err)))
vim.cmd(ok and "qa!" or "cquit!")
