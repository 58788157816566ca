-- Issue 35, the other direction, headless, on the real server and the scripted model, with ruff server
-- attached beside forge: the agent's shell changes calc.py on disk (sed -i) while its buffer is open and
-- unmodified; the plugin reads the buffer again when the server asks (forge/reloadDocuments) before the
-- next tool call, so the patch that follows applies, the test passes, Neovim sees no change on disk it has
-- not read (no W11 at :checktime, :w writes without a question) and ruff gets the new text too. A buffer
-- with the user's unsaved line is never read again (the line survives; the model and the user are told); a
-- hidden buffer is read again as well; a file the shell removed keeps its buffer; :ForgeUndoTurn puts back
-- the patch and the shell's change in the buffer and on disk. Env as tests/nvim/test_nvim.py's _workspaces
-- (calc.py, test_calc.py); FORGE_SECTIONS picks sections. Prints PASS/FAIL.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, wait, script, events, turn, wanted = t.ws, t.wait, t.script, t.events, t.turn, t.wanted
t.deadline(170000)

local CALC = { "def add(a, b):", "    return a - b" }
local UNITTEST = "python3 -m unittest -q test_calc"
local SED = "sed -i 's/a - b/a + b/' calc.py"
local has_011 = vim.fn.has("nvim-0.11") == 1

local function patch(old, new)
  return { name = "patch", arguments = { file_path = "calc.py", old_string = old, new_string = new } }
end

local function calls(...)
  return { tool_calls = { ... } }
end

local function shell(command)
  return calls({ name = "shell", arguments = { command = command } })
end

local function disk()
  return table.concat(vim.fn.readfile(ws .. "/calc.py"), "|")
end

local function buffer(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "|")
end

local function outputs(tool, since)
  local found = {}
  for i = since + 1, #events do
    if events[i].type == "toolCallFinished" and events[i].tool == tool then
      table.insert(found, events[i].output)
    end
  end
  return found
end

-- A "file changed on disk" question (W11/W12) would come through FileChangedShell: none may.
local changed_shell = 0
vim.api.nvim_create_autocmd("FileChangedShell", {
  callback = function()
    changed_shell = changed_shell + 1
    vim.v.fcs_choice = ""
  end,
})

t.setup()

-- ruff server, a foreign language server, on every Python buffer.
local ruff = vim.fn.fnamemodify(os.getenv("FORGE_PYTHON"), ":h") .. "/ruff"
local function attach_ruff(buf)
  local config = { name = "ruff", cmd = { ruff, "server" }, root_dir = ws }
  if has_011 then
    return vim.lsp.start(config, { bufnr = buf })
  end
  local id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, id)
  return id
end

local function ruff_says(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == "Ruff" and tostring(d.code) == code then
      return true
    end
  end
  return false
end

--- calc.py opened as it is on disk (written first), the servers up.
local function open_calc()
  vim.cmd("silent! %bwipeout!")
  vim.fn.writefile(CALC, ws .. "/calc.py")
  vim.cmd("edit " .. ws .. "/calc.py")
  local buf = vim.api.nvim_get_current_buf()
  t.wait_server()
  return buf
end

vim.schedule(function()
  local ok, err = pcall(function()
    -- The issue's turn: the shell fixes calc.py, the agent patches it again, the test runs: all on the
    -- shell's text. ruff sees the import the shell added.
    if wanted("shell") then
      local buf = open_calc()
      local ruff_id = attach_ruff(buf)
      wait(30000, "ruff not up", function()
        local c = vim.lsp.get_client_by_id(ruff_id)
        return c ~= nil and c.initialized
      end)
      script({
        shell(SED .. " && sed -i '1i import os' calc.py"),
        calls(patch("a + b", "a + b  # fixed")),
        shell(UNITTEST),
        { text = "Fixed." },
      })
      local since = #events
      local finished = turn("ForgeRun fix add")
      assert(finished.summary.failures == 0, vim.inspect(outputs("patch", since)) .. vim.inspect(outputs("shell", since)))
      assert(outputs("patch", since)[1] == "Patched calc.py: 1 replacement(s)", vim.inspect(outputs("patch", since)))
      assert(not outputs("shell", since)[1]:find("Note", 1, true), outputs("shell", since)[1])
      assert(disk() == "import os|def add(a, b):|    return a + b  # fixed", disk())
      assert(buffer(buf) == disk(), buffer(buf))
      assert(not vim.bo[buf].modified, "the buffer is left modified")
      vim.cmd("checktime")
      assert(changed_shell == 0, "Neovim saw the file changed on disk")
      wait(10000, "ruff did not see the shell's import", function()
        return ruff_says(buf, "F401")
      end)
      -- `u` takes back the patch, then the reload.
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent undo")
        vim.cmd("silent undo")
      end)
      assert(buffer(buf) == table.concat(CALC, "|"), buffer(buf))
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent write")
      end)
      assert(disk() == table.concat(CALC, "|"), disk())
      vim.lsp.stop_client(ruff_id, true)
      wait(10000, "ruff did not stop", function()
        return vim.lsp.get_client_by_id(ruff_id) == nil
      end)
      vim.wait(200) -- its exit's scheduled clean-up, while its buffer still exists
    end

    -- The user's unsaved line: the buffer is not read again, the line survives; the model and the user are told.
    if wanted("dirty") then
      local buf = open_calc()
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# my unsaved line" })
      vim.wait(400) -- the didChange of the typing
      script({ shell(SED), { text = "Fixed?" } })
      local since, notes = #events, #t.notes
      turn("ForgeRun fix add")
      assert(buffer(buf) == "def add(a, b):|    return a - b|# my unsaved line", buffer(buf))
      assert(vim.bo[buf].modified, "the user's buffer lost its changes")
      assert(disk() == "def add(a, b):|    return a + b", disk())
      local said = outputs("shell", since)[1]
      assert(said:find("Note: calc.py changed on disk during this call, but the editor holds unsaved changes", 1, true), said)
      local told = t.notes_with("calc.py changed on disk (the agent's shell call) while it has unsaved changes of yours", notes)
      assert(#told == 1, vim.inspect(t.notes))
      assert(changed_shell == 0, "the plugin asked about the file")
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent edit!")
      end)
    end

    -- A hidden buffer (another one in the window) is read again too.
    if wanted("hidden") then
      local buf = open_calc()
      vim.cmd("enew")
      script({ shell(SED), calls(patch("a + b", "b + a")), { text = "Swapped." } })
      local since = #events
      local finished = turn("ForgeRun swap")
      assert(finished.summary.failures == 0, vim.inspect(outputs("patch", since)))
      assert(disk() == "def add(a, b):|    return b + a", disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
      vim.cmd("silent! bwipeout!")
    end

    -- A file the shell removed: said; its buffer stays, unmodified, as it was.
    if wanted("removed") then
      local buf = open_calc()
      script({ shell("rm calc.py"), { text = "Removed." } })
      local since = #events
      turn("ForgeRun remove it")
      local said = outputs("shell", since)[1]
      assert(said:find("Note: calc.py was removed from the disk during this call", 1, true), said)
      assert(vim.api.nvim_buf_is_loaded(buf) and buffer(buf) == table.concat(CALC, "|"), buffer(buf))
      assert(vim.fn.filereadable(ws .. "/calc.py") == 0, "calc.py is back")
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent write")
      end)
    end

    -- :ForgeUndoTurn after the patch and the shell's change: the buffer and the disk as before the turn.
    if wanted("undo") then
      local buf = open_calc()
      script({ calls(patch("a - b", "a + b")), shell("sed -i 's/a + b/a * b/' calc.py"), { text = "Done." } })
      turn("ForgeRun fix add")
      assert(disk() == "def add(a, b):|    return a * b", disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
      local notes = #t.notes
      vim.cmd("ForgeUndoTurn")
      wait(10000, "no undo message", function()
        return #t.notes_with("Forge: undid turn ", notes) == 1
      end)
      assert(disk() == table.concat(CALC, "|"), disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
      vim.cmd("checktime")
      assert(changed_shell == 0, "Neovim saw the file changed on disk")
    end
  end)
  t.finish(ok, err)
end)
