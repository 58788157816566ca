-- :ForgeUndoTurn (issue 25 item 5), headless, on the real server and the scripted model: the open
-- buffer is put back through the server's edit, a file the turn created is deleted, a buffer the user
-- changed since refuses the undo (named), and the same turn undone twice says so.
-- Env as tests/nvim/test_nvim.py's _workspaces. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, uv, notes_with, script, turn = t.ws, t.uv, t.notes_with, t.script, t.turn
local wait = t.wait
t.deadline(100000)

local function call(name, arguments)
  return { tool_calls = { { name = name, arguments = arguments } } }
end

-- The user types between the server reading the buffer's version and the edit reaching Neovim: a
-- keystroke at the moment the workspace/applyEdit arrives (typed_on_edit set: the text typed on line 1).
local typed_on_edit = nil
local handlers = require("forge.client").handlers
local apply_edit = handlers["workspace/applyEdit"]
handlers["workspace/applyEdit"] = function(err, params, ctx, ...)
  if typed_on_edit then
    vim.api.nvim_buf_set_lines(vim.fn.bufnr(ws .. "/main.py"), 0, 1, false, { typed_on_edit })
    typed_on_edit = nil
  end
  return apply_edit(err, params, ctx, ...)
end

t.setup()

local function line1()
  return vim.api.nvim_buf_get_lines(vim.fn.bufnr(ws .. "/main.py"), 0, 1, false)[1]
end

vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/main.py")
    t.wait_server()
    script({
      call("patch", { file_path = "main.py", old_string = "x = 1", new_string = "x = 2" }),
      call("write", { file_path = "made.py", content = "y = 0\n" }),
      { text = "done" },
    })
    local first = turn("ForgeRun bump x and add made.py")
    assert(first.status == "completed", vim.inspect(first))
    wait(5000, "the edit never reached the buffer", function()
      return line1() == "x = 2"
    end)
    assert(uv.fs_stat(ws .. "/made.py"), "made.py was not written")
    vim.wait(300) -- the buffer's change reaches the server (didChange)
    local function floats()
      return vim.tbl_filter(function(win)
        return vim.api.nvim_win_get_config(win).relative ~= ""
      end, vim.api.nvim_list_wins())
    end
    wait(2000, "no reply float", function()
      return #floats() == 1
    end)

    vim.cmd("ForgeUndoTurn")
    wait(10000, "no undo message", function()
      return #notes_with("Forge: undid turn ") == 1
    end)
    -- The undone turn's reply goes with it (a newcomer saw it stay over the restored line).
    assert(#floats() == 0, "the undone turn's reply float is still open")
    local said = notes_with("Forge: undid turn ")[1]
    assert(said.msg:find("restored main.py, removed made.py", 1, true), said.msg)
    assert(line1() == "x = 1", "the buffer was not put back: " .. tostring(line1()))
    assert(not uv.fs_stat(ws .. "/made.py"), "made.py is still there")

    -- A second turn; then the user edits its result: the undo is refused, naming the file, and
    -- nothing is restored.
    script({ call("patch", { file_path = "main.py", old_string = "x = 1", new_string = "x = 3" }), { text = "done" } })
    turn("ForgeRun bump x again")
    wait(5000, "the second edit never reached the buffer", function()
      return line1() == "x = 3"
    end)
    vim.api.nvim_buf_set_lines(vim.fn.bufnr(ws .. "/main.py"), 0, 1, false, { "x = 3  # mine" })
    vim.wait(500) -- past the didChange debounce
    vim.cmd("ForgeUndoTurn")
    wait(10000, "no refusal", function()
      return #notes_with("main.py changed since the turn") == 1
    end)
    local refused = notes_with("main.py changed since the turn")[1]
    assert(refused.level == vim.log.levels.ERROR and not refused.msg:find("\n"), vim.inspect(refused))
    assert(line1() == "x = 3  # mine", "the user's line was lost: " .. tostring(line1()))

    -- A third turn changes main.py (open) and made.py (on disk); the user types in main.py just as the
    -- undo's edit arrives (its version is stale): Neovim's own apply_workspace_edit would skip it
    -- silently, and "applied" would be a lie. The plugin answers applied=false with a reason, so the
    -- server refuses the undo naming main.py, puts made.py back, and the typed line stays.
    script({
      call("patch", { file_path = "main.py", old_string = "x = 3  # mine", new_string = "x = 4" }),
      call("write", { file_path = "made.py", content = "y = 1\n" }),
      { text = "done" },
    })
    turn("ForgeRun bump x a third time")
    wait(5000, "the third edit never reached the buffer", function()
      return line1() == "x = 4"
    end)
    vim.wait(500) -- past the didChange debounce
    typed_on_edit = "x = 4  # typed while the undo came"
    vim.cmd("ForgeUndoTurn")
    wait(10000, "no refusal for the stale edit", function()
      return #notes_with("cannot undo;") == 2
    end)
    local stale = notes_with("cannot undo;")[2]
    assert(stale.level == vim.log.levels.ERROR and not stale.msg:find("\n"), vim.inspect(stale))
    -- Short, the file first, in the words of a file changed since (it was cut before the file name);
    -- the whole cause in :ForgeLog.
    local said = "Forge: forge.undoTurn: main.py changed since the turn: cannot undo; nothing was restored"
    assert(stale.msg:sub(1, #said) == said, stale.msg)
    assert(stale.msg:find("nothing was restored, and your changes are kept", 1, true), stale.msg)
    local logged = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
    assert(logged:find("restoring main.py failed (the editor did not apply the edit to main.py: you changed it since)", 1, true), logged)
    assert(#notes_with("Forge: undid turn ") == 1, "the stale undo was told as done")
    assert(line1() == "x = 4  # typed while the undo came", "the user's typing was lost: " .. tostring(line1()))
    local made = io.open(ws .. "/made.py"):read("*a")
    assert(made == "y = 1\n", "made.py was not put back as the turn left it: " .. vim.inspect(made))

    -- The first turn again, by id: already undone.
    vim.cmd("ForgeUndoTurn " .. first.turnId)
    wait(10000, "no 'already undone'", function()
      return #notes_with("was already undone") == 1
    end)
  end)
  t.finish(ok, err)
end)
