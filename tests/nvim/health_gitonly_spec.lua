-- :checkhealth forge in a plain git repository (no .forge.toml): the workspace is named without a
-- .forge.toml that is not there. Env as forge_spec.lua (FORGE_GITONLY). Prints PASS/FAIL.
local repo = os.getenv("FORGE_GITONLY")
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
local uv = vim.uv or vim.loop

local deadline = uv.new_timer()
deadline:start(60000, 0, vim.schedule_wrap(function()
  io.stdout:write("FAIL timeout\n")
  os.exit(3)
end))
vim.notify = function() end

local ok, err = xpcall(function()
  local forge = require("forge")
  forge.setup({ cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" } })
  vim.cmd("edit " .. repo .. "/notes.txt")
  vim.cmd("ForgeStatus") -- the first :Forge command starts the client here
  assert(vim.wait(30000, function()
    local c = forge.get_client()
    return c ~= nil and c.initialized
  end, 20), "no client")
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  io.stdout:write("HEALTH\n" .. report .. "\n")
  assert(report:find("workspace " .. repo .. " (no .forge.toml)", 1, true), report)
  assert(not report:find(".forge.toml: no problems", 1, true), report)
end, debug.traceback)

io.stdout:write((ok and "PASS" or ("FAIL " .. tostring(err))) .. "\n")
os.exit(ok and 0 or 1)
