-- Issue 35 section 1, headless, on the real server and the scripted model: the agent's edit to an open,
-- unmodified buffer reaches the disk before its next tool call (the plugin writes the buffer when the
-- server asks), the buffer is left unmodified and one `u` takes the edit back; a buffer with the user's
-- unsaved line is never written (the line survives, the model and the user are told); two patches in one
-- response both apply; :ForgeUndoTurn puts back the buffer and the disk; a BufWritePre formatter does not
-- run on the agent's save. Env as tests/nvim/test_nvim.py's _workspaces (calc.py, test_calc.py); FORGE_SECTIONS
-- picks sections. Prints PASS/FAIL.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, wait, script, events, turn, wanted = t.ws, t.wait, t.script, t.events, t.turn, t.wanted
t.deadline(150000)

local CALC = { "def add(a, b):", "    return a - b" }
local UNITTEST = "python3 -m unittest -q test_calc"

local function patch(old, new)
  return { name = "patch", arguments = { file_path = "calc.py", old_string = old, new_string = new } }
end

local function calls(...)
  return { tool_calls = { ... } }
end

local function run_tests()
  return calls({ name = "shell", arguments = { command = UNITTEST } })
end

local function disk()
  return table.concat(vim.fn.readfile(ws .. "/calc.py"), "|")
end

local function buffer(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "|")
end

--- The outputs of the tool calls of the last turn, by tool.
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

--- calc.py opened as it is on disk (written first), the server up.
local function open_calc()
  vim.cmd("silent! %bwipeout!")
  vim.fn.writefile(CALC, ws .. "/calc.py")
  vim.cmd("edit " .. ws .. "/calc.py")
  t.wait_server()
  return vim.api.nvim_get_current_buf()
end

vim.schedule(function()
  local ok, err = pcall(function()
    -- The newcomer's turn: patch, then the test, in one turn: the test sees the fix.
    if wanted("newcomer") then
      local buf = open_calc()
      script({ calls(patch("a - b", "a + b")), run_tests(), { text = "Fixed." } })
      local since = #events
      local finished = turn("ForgeRun fix add")
      assert(finished.summary.failures == 0, vim.inspect(outputs("shell", since)))
      assert(disk() == "def add(a, b):|    return a + b", disk())
      assert(buffer(buf) == disk(), buffer(buf))
      assert(not vim.bo[buf].modified, "the buffer is left modified")
      assert(outputs("patch", since)[1] == "Patched calc.py: 1 replacement(s)", vim.inspect(outputs("patch", since)))
      vim.cmd("checktime")
      assert(changed_shell == 0, "Neovim saw the file changed on disk")
      -- One undo takes the agent's edit back (in the buffer; the user saves it or not).
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent undo")
      end)
      assert(buffer(buf) == table.concat(CALC, "|"), buffer(buf))
      assert(vim.bo[buf].modified, "the undone buffer is not modified")
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent write")
      end)
    end

    -- The user's unsaved line: the edit goes to the buffer, never saved; the test runs on the disk's file.
    if wanted("dirty") then
      local buf = open_calc()
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# my unsaved line" })
      vim.wait(400) -- the didChange of the typing
      script({ calls(patch("a - b", "a + b")), run_tests(), { text = "Fixed?" } })
      local since, notes = #events, #t.notes
      local finished = turn("ForgeRun fix add")
      assert(buffer(buf) == "def add(a, b):|    return a + b|# my unsaved line", buffer(buf))
      assert(vim.bo[buf].modified, "the user's buffer was saved")
      assert(disk() == table.concat(CALC, "|"), disk())
      assert(finished.summary.failures == 1, vim.inspect(finished.summary))
      local said = outputs("patch", since)[1]
      assert(said:find("Note: calc.py has unsaved changes in the editor", 1, true), said)
      assert(#t.notes_with("calc.py has unsaved changes of yours, so the agent's edit stays in the buffer", notes) == 1, vim.inspect(t.notes))
      vim.cmd("checktime")
      assert(changed_shell == 0, "Neovim saw the file changed on disk")
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent edit!")
      end)
    end

    -- Two patches of calc.py in one response: the second reads the first's result, both land on disk.
    if wanted("race") then
      local buf = open_calc()
      script({ calls(patch("a - b", "a + b"), patch("a + b", "a + b  # fixed")), run_tests(), { text = "Fixed." } })
      local since = #events
      local finished = turn("ForgeRun fix add twice")
      assert(finished.summary.failures == 0, vim.inspect(outputs("patch", since)) .. vim.inspect(outputs("shell", since)))
      assert(disk() == "def add(a, b):|    return a + b  # fixed", disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
    end

    -- :ForgeUndoTurn after the fix: the buffer and the disk are back, the buffer unmodified.
    if wanted("undo") then
      vim.fn.writefile({ "import os", "", "", "def add(a, b):", "    return a - b" }, ws .. "/calc.py")
      vim.cmd("silent! %bwipeout!")
      vim.cmd("edit " .. ws .. "/calc.py")
      local buf = vim.api.nvim_get_current_buf()
      -- Two patches, one of them removing the first lines.
      script({ calls(patch("a - b", "a + b"), patch("import os\n\n\n", "")), { text = "Fixed." } })
      turn("ForgeRun fix add")
      assert(disk() == "def add(a, b):|    return a + b", disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
      local notes = #t.notes
      vim.cmd("ForgeUndoTurn")
      wait(10000, "no undo message", function()
        return #t.notes_with("Forge: undid turn ", notes) == 1
      end)
      assert(disk() == "import os|||def add(a, b):|    return a - b", disk())
      assert(buffer(buf) == disk() and not vim.bo[buf].modified, buffer(buf))
    end

    -- A new file open in an empty buffer (not on disk yet): nothing of the user's in it, so the agent's
    -- write is saved and creates the file.
    if wanted("newfile") then
      vim.cmd("silent! %bwipeout!")
      vim.cmd("edit " .. ws .. "/fresh.py")
      local buf = vim.api.nvim_get_current_buf()
      t.wait_server()
      script({ calls({ name = "write", arguments = { file_path = "fresh.py", content = "x = 1\n" } }), { text = "Wrote." } })
      local since = #events
      local finished = turn("ForgeRun write fresh.py")
      assert(finished.summary.failures == 0, vim.inspect(outputs("write", since)))
      assert(vim.fn.filereadable(ws .. "/fresh.py") == 1, "fresh.py not written: " .. vim.inspect(outputs("write", since)))
      assert(table.concat(vim.fn.readfile(ws .. "/fresh.py"), "|") == "x = 1", "fresh.py")
      assert(buffer(buf) == "x = 1" and not vim.bo[buf].modified, buffer(buf))
      assert(not outputs("write", since)[1]:find("Note", 1, true), outputs("write", since)[1])
    end

    -- The user's BufWritePre formatter does not run on the agent's save: the agent's text lands as it
    -- wrote it (its next patch matches); the user's own :w formats as always.
    if wanted("formatter") then
      local buf = open_calc()
      local group = vim.api.nvim_create_augroup("disk_spec_formatter", { clear = true })
      vim.api.nvim_create_autocmd("BufWritePre", {
        group = group,
        buffer = buf,
        callback = function()
          vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# formatted" })
        end,
      })
      script({ calls(patch("a - b", "a + b")), calls(patch("a + b", "b + a")), { text = "Fixed." } })
      local since = #events
      local finished = turn("ForgeRun fix add")
      assert(finished.summary.failures == 0, vim.inspect(outputs("patch", since)))
      assert(disk() == "def add(a, b):|    return b + a", disk())
      vim.cmd("silent write")
      assert(disk() == "def add(a, b):|    return b + a|# formatted", disk())
      vim.api.nvim_del_augroup_by_id(group)
    end
  end)
  t.finish(ok, err)
end)
