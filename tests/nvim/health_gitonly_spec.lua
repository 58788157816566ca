-- :checkhealth forge in a plain git repository (no .forge.toml): the workspace is named without a
-- .forge.toml that is not there. Env as forge_spec.lua (FORGE_GITONLY). Prints PASS/FAIL.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local repo = os.getenv("FORGE_GITONLY")
t.deadline(60000)
vim.notify = function() end

local ok, err = xpcall(function()
  t.setup()
  vim.cmd("edit " .. repo .. "/notes.txt")
  vim.cmd("ForgeStatus") -- the first :Forge command starts the client here
  t.wait_server("no client")
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  io.stdout:write("HEALTH\n" .. report .. "\n")
  assert(report:find("workspace " .. repo .. " (no .forge.toml)", 1, true), report)
  assert(not report:find(".forge.toml: no problems", 1, true), report)
end, debug.traceback)

t.finish(ok, err)
