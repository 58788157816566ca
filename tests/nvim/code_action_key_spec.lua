-- Issue 35: the standard code action key offers "Forge: Fix" for another server's diagnostic. ruff server
-- (FORGE_RUFF) runs beside forge on main.py and reports its unused `import os`; vim.lsp.buf.code_action() (and
-- `gra` where Neovim maps it) lists ruff's own fixes and Forge's, and the Fix runs a turn that carries ruff's
-- diagnostic. Neovim 0.11 sends each server only its own diagnostics: the plugin adds every namespace's.
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, of_type = t.ws, t.of_type
local has_011 = vim.fn.has("nvim-0.11") == 1
t.deadline(100000)

-- The code action menu: vim.ui.select, answered with the item whose title starts with `pick`.
local menus, pick = {}, nil
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(menus, titles)
  t.out("MENU " .. table.concat(titles, " | "))
  for i, title in ipairs(titles) do
    if pick and title:find(pick, 1, true) then
      on_choice(items[i], i)
      return
    end
  end
  on_choice(nil, nil)
end

local forge = t.setup({ reply = "none" })

local function start_ruff(buf)
  local config = { name = "ruff", cmd = { os.getenv("FORGE_RUFF"), "server" }, root_dir = ws }
  if has_011 then
    return vim.lsp.start(config, { bufnr = buf })
  end
  local id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, id)
  return id
end

local function ruff_diagnostic(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == "F401" then
      return d
    end
  end
  return nil
end

vim.schedule(function()
  local ok, err = xpcall(function()
    t.script({ { text = "Removed the import." } })
    vim.cmd("edit " .. ws .. "/main.py")
    local buf = vim.api.nvim_get_current_buf()
    assert(start_ruff(buf), "ruff server did not start")
    t.wait(30000, "no forge server", function()
      local c = forge.get_client()
      return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
    end)
    t.wait(30000, "ruff reported nothing on main.py", function()
      return ruff_diagnostic(buf) ~= nil
    end)
    local d = ruff_diagnostic(buf)
    vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })

    -- The standard key, as a user presses it: `gra` where Neovim maps it (0.11), else the function it runs.
    local key = vim.fn.maparg("gra", "n") ~= ""
    t.out("KEY " .. (key and "gra" or "vim.lsp.buf.code_action()"))
    local function code_action()
      if key then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("gra", true, false, true), "mx", false)
      else
        vim.lsp.buf.code_action()
      end
    end
    code_action()
    t.wait(20000, "no code action menu", function()
      return #menus > 0
    end)
    local titles = table.concat(menus[1], " | ")
    assert(titles:find("Forge: Fix `os` imported but unused", 1, true), titles)
    assert(titles:find("Ruff (F401): Remove unused import", 1, true), "ruff's own fixes are gone: " .. titles)

    -- Picking it runs the turn, its prompt carrying ruff's diagnostic.
    pick = "Forge: Fix"
    code_action()
    t.wait(60000, "no Fix turn", function()
      return #of_type("turnFinished") == 1
    end)
    local prompt = of_type("turnStarted")[1].prompt
    assert(prompt:find("F401", 1, true) and prompt:lower():find("source: ruff", 1, true), prompt)
    assert(prompt:find("> 1 | import os", 1, true), prompt)
  end, debug.traceback)
  t.finish(ok, err)
end)
