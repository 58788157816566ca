-- Issue 25 (in the editor), headless: :ForgeFix lists Forge's code actions with a diagnostic from
-- another namespace (Neovim 0.11 sends only the server's own), the Fix runs a turn whose prompt
-- carries the diagnostic; on a selection "Forge: Edit selection…" asks through vim.ui.input.
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, out, wait, script, of_type = t.ws, t.out, t.wait, t.script, t.of_type
t.deadline(100000)

-- The code action menu: vim.ui.select, answered with the item whose title starts with `pick`.
local menus, pick = {}, nil
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(menus, titles)
  out("MENU " .. table.concat(titles, " | "))
  for i, title in ipairs(titles) do
    if pick and title:find(pick, 1, true) then
      on_choice(items[i], i)
      return
    end
  end
  on_choice(nil, nil)
end
local inputs = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(inputs, opts.prompt)
  on_confirm("rename port to listen_port")
end

local forge = t.setup()

vim.schedule(function()
local ok, err = pcall(function()
  script({ { text = "Fixed." }, { text = "Renamed." } })
  vim.cmd("edit " .. ws .. "/main.py")
  local buf = vim.api.nvim_get_current_buf()
  wait(30000, "no server", function()
    local c = forge.get_client()
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
  end)
  -- :ForgeFix on a line without a diagnostic: no menu, one line in Forge's words (not Neovim's bare
  -- "No code actions available"). A Forge diagnostic of its own there is no diagnostic to fix either.
  local own = vim.api.nvim_create_namespace("forge-own-test")
  vim.diagnostic.set(own, buf, { { lnum = 2, col = 0, message = "tool call failed", source = "forge" } })
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local since = #t.notes
  vim.cmd("ForgeFix")
  wait(5000, "no word from :ForgeFix without a diagnostic", function()
    return #t.notes > since
  end)
  vim.wait(500) -- a code action request would have answered by now
  assert(#menus == 0, "a menu without a diagnostic: " .. vim.inspect(menus))
  local said = t.notes_with("", since)
  assert(#said == 1 and said[1].msg:find("^Forge: no diagnostic here;") and not said[1].msg:find("\n"), vim.inspect(said))
  assert(said[1].msg:find(":ForgeRun", 1, true) and said[1].msg:find("Explain", 1, true), said[1].msg)
  vim.diagnostic.reset(own, buf)
  -- A diagnostic from another source, in a namespace of its own (a linter, another server).
  local ns = vim.api.nvim_create_namespace("other-linter")
  vim.diagnostic.set(ns, buf, {
    { lnum = 1, col = 0, end_lnum = 1, end_col = 4, severity = vim.diagnostic.severity.ERROR,
      message = '"port" is not a known attribute\nmore detail', source = "pyright", code = "reportAttributeAccessIssue" },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  pick = "Forge: Fix"
  vim.cmd("ForgeFix")
  wait(30000, "no Fix turn", function()
    return #of_type("turnFinished") == 1
  end)
  assert(menus[1][1]:find('Forge: Fix "port" is not a known attribute', 1, true), vim.inspect(menus))
  assert(not table.concat(menus[1], "|"):find("Explain", 1, true), "selection actions without a selection")
  local prompt = of_type("turnStarted")[1].prompt
  assert(prompt:find("source: pyright", 1, true) and prompt:find("reportAttributeAccessIssue", 1, true), prompt)
  assert(prompt:find("> 2 | port = 8080", 1, true), prompt)
  -- On a selection: Edit selection asks for the instruction (vim.ui.input), then runs on those lines.
  pick = "Forge: Edit selection"
  vim.cmd("1,2ForgeFix")
  wait(30000, "no Edit turn", function()
    return #of_type("turnFinished") == 2
  end)
  assert(#inputs == 1 and inputs[1]:find("edit the selection", 1, true), vim.inspect(inputs))
  local titles = table.concat(menus[2], "|")
  assert(titles:find("Forge: Explain", 1, true) and titles:find("Forge: Fix", 1, true), titles)
  prompt = of_type("turnStarted")[2].prompt
  assert(prompt:find("^Edit the selected code: rename port to listen_port"), prompt)
  assert(prompt:find("selected lines 1-2 of main.py", 1, true), prompt)
end)

t.finish(ok, err)
end)
