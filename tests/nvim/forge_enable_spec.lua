-- Neovim 0.11's native way: lsp/forge.lua + vim.lsp.config/vim.lsp.enable, no setup().
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, notes = t.ws, t.notes
local gitonly = os.getenv("FORGE_GITONLY")
vim.cmd("runtime plugin/forge.lua")
vim.cmd("filetype on") -- vim.lsp.enable attaches on FileType (-u NONE leaves detection off)

local function forge_clients()
  return #vim.lsp.get_clients({ name = "forge" })
end

local ok, err = pcall(function()
  vim.lsp.config("forge", { cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" } })
  vim.lsp.enable("forge")
  vim.cmd("edit " .. gitonly .. "/notes.txt")
  vim.wait(300)
  assert(forge_clients() == 0, "a server started for a git-only repository")
  vim.cmd("edit " .. ws .. "/main.py")
  assert(vim.wait(10000, function()
    return forge_clients() == 1 and vim.lsp.get_clients({ name = "forge" })[1].initialized
  end, 20), "vim.lsp.enable did not start forge for .forge.toml")
  local client = vim.lsp.get_clients({ name = "forge" })[1]
  assert(client.config.root_dir == ws, client.config.root_dir)
  -- the commands (defined without setup) use that client, from the log window too: :ForgeStatus
  -- tells "Forge: idle · model M · limit N"
  vim.cmd("ForgeLog")
  vim.cmd("ForgeStatus")
  local told
  t.wait(10000, "no status", function()
    for _, n in ipairs(notes) do
      if n.msg:find("^Forge: %a+ · model ") then
        told = n.msg
      end
    end
    return told ~= nil
  end)
  assert(told:find(" · model scripted/script.json · ", 1, true), told)
  assert(forge_clients() == 1, "a second server started")
  assert(t.count_notes("unknown") == 0, vim.inspect(notes))
  -- :checkhealth forge checks the command vim.lsp.config("forge") gave, not a forge-lsp on PATH
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  io.stdout:write("HEALTH\n" .. report .. "\n")
  assert(not report:find("not found on PATH", 1, true), report)
  assert(report:find(os.getenv("FORGE_PYTHON") .. " -m forge_lsp: forge-lsp ", 1, true), report)
  client:stop()
end)
io.stdout:write((ok and "PASS" or ("FAIL " .. tostring(err))) .. "\n")
vim.schedule(function()
  os.exit(ok and 0 or 1)
end)
