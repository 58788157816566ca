-- A typo in the user's config.toml (not open in Neovim): the server says it once in a message, and opening the
-- file later draws its diagnostic (Neovim 0.7 to 0.11 keep diagnostics of a file not loaded undrawn when it is
-- opened). Env as test_nvim.py's _workspaces; the user's config.toml holds `modle = ...` on line 2.
-- Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws = t.ws
t.deadline(60000)

t.setup()
local config = vim.env.XDG_CONFIG_HOME .. "/forge-lsp/config.toml"

local function drawn(buf)
  local placed = vim.fn.sign_getplaced(buf, { group = "*" })[1].signs
  return #placed
end

vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/main.py")
    t.wait_server()
    t.wait(20000, "the typo was not said", function()
      return t.noted("modle: unknown key") ~= nil
    end)
    local said = t.noted("modle: unknown key").msg
    assert(said == "Forge: modle: unknown key (did you mean model?) (" .. config .. ":2)", said)
    vim.cmd("edit " .. config)
    local buf = vim.api.nvim_get_current_buf()
    assert(vim.wait(5000, function()
      return #vim.diagnostic.get(buf) > 0 and drawn(buf) > 0
    end, 50), "the file's diagnostic is not drawn: " .. #vim.diagnostic.get(buf) .. " stored, " .. drawn(buf) .. " signs")
    assert(t.count_notes("modle: unknown key") == 1, "said more than once")
  end)
  t.finish(ok, err)
end)
