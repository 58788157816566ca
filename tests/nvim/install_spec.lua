-- Issue 35: the README's install (a virtual environment .venv in the forge-lsp clone, not active in the shell
-- that starts Neovim) with the README's setup (cmd = { "forge-lsp" }). FORGE_PLUGIN is editors/nvim of such a
-- clone (FORGE_CLONE); PATH has no forge-lsp. FORGE_INSTALL:
--   "venv"    the clone has .venv/bin/forge-lsp: the plugin starts it, and :checkhealth forge says so;
--   "enable"  the same through vim.lsp.enable("forge") (0.11), with no setup();
--   "missing" nothing is installed: one line says what to set (not Neovim's "Spawning language server ...
--             failed"), once for files opened and again for each :Forge command; :checkhealth forge names the
--             install in this clone, not `pip install forge-lsp` nor a system Python's `-m forge_lsp`.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, clone, case = t.ws, os.getenv("FORGE_CLONE"), os.getenv("FORGE_INSTALL")
t.deadline(60000)

local function health()
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  t.out("HEALTH\n" .. report)
  vim.cmd("bwipeout")
  return report
end

local ok, err = xpcall(function()
  assert(vim.fn.executable("forge-lsp") == 0, "forge-lsp is on PATH: " .. vim.fn.exepath("forge-lsp"))
  local venv = clone .. "/.venv/bin/forge-lsp"
  if case == "enable" then
    vim.cmd("runtime plugin/forge.lua")
    vim.cmd("filetype on") -- vim.lsp.enable attaches on FileType (-u NONE leaves detection off)
    vim.lsp.enable("forge")
  else
    require("forge").setup({ cmd = { "forge-lsp" } }) -- the README's setup, as written
  end
  vim.cmd("edit " .. ws .. "/main.py")
  if case == "venv" or case == "enable" then
    t.wait_server("the clone's forge-lsp did not start")
    local client = require("forge").get_client()
    assert(client.config.cmd[1] == venv, vim.inspect(client.config.cmd))
    local buf = vim.api.nvim_get_current_buf()
    t.wait(10000, "main.py not attached", function()
      return vim.lsp.buf_is_attached(buf, client.id)
    end)
    local status = require("forge.client").execute_sync("forge.status", {}, 10000)
    assert(type(status) == "table" and status.running == false, vim.inspect(status))
    if case == "venv" then
      local report = health()
      assert(report:find(venv .. " --version", 1, true) or report:find(venv .. ": forge-lsp", 1, true), report)
      assert(report:find("the virtual environment of the clone this plugin is in", 1, true), report)
    end
    assert(#t.notes_with("not found") == 0, vim.inspect(t.notes))
    return
  end
  -- missing: one line, an error, saying what to set; opening another file says nothing more.
  local said = "Forge: forge-lsp not found: set cmd in setup() (:checkhealth forge)"
  t.wait(5000, "nothing said", function()
    return #t.notes > 0
  end)
  vim.cmd("edit " .. ws .. "/other.py")
  vim.wait(300)
  assert(#t.notes == 1 and t.notes[1].msg == said and t.notes[1].level == vim.log.levels.ERROR, vim.inspect(t.notes))
  vim.cmd("ForgeStatus") -- a command the user typed: told again, and only that
  assert(#t.notes == 2 and t.notes[2].msg == said, vim.inspect(t.notes))
  local messages = vim.api.nvim_exec("messages", true)
  assert(not messages:find("Spawning", 1, true), messages)
  local report = health()
  assert(report:find("forge-lsp not found on PATH (cmd of setup())", 1, true), report)
  assert(report:find("cd " .. clone .. " && python3 -m venv .venv && .venv/bin/pip install -e .", 1, true), report)
  assert(report:find("cmd = { '" .. venv .. "' }", 1, true), report)
  assert(report:find("forge-lsp --print-editor-config", 1, true), report)
  assert(not report:find("pip install forge-lsp", 1, true) and not report:find("'-m'", 1, true), report)
end, debug.traceback)

t.finish(ok, err)
