-- Issue 35, what a turn says in Neovim: the cancel notification in the server's words of what it stopped
-- (forge.cancel's answer), not guessed from the events the plugin saw; :ForgeLog's turn-start line holds the
-- user's prompt, and one `context:` line for what the editor added (not the selection and unsaved diffs).
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, script, shell = t.ws, t.script, t.shell
t.deadline(100000)

-- The plugin may miss a toolCallStarted (hidden here): what the cancel says must not depend on it.
local clients = require("forge.client")
local shown_event = clients.handlers["forge/event"]
local hide_starts = false
clients.handlers["forge/event"] = function(err, result, ctx, config)
  if hide_starts and type(result) == "table" and result.type == "toolCallStarted" then
    return
  end
  return shown_event(err, result, ctx, config)
end

local forge = t.setup({ reply = "none" })

local function cancelled_notes(since)
  return t.notes_with("Forge: turn cancelled", since)
end

local ok, err = xpcall(function()
  vim.cmd("edit " .. ws .. "/main.py")
  t.wait_server()

  -- A shell command runs; the plugin never saw its call start. The server says it killed it.
  hide_starts = true
  script({ shell("sleep 30"), { text = "never" } })
  vim.cmd("ForgeRun wait")
  t.wait(30000, "the shell command did not start", function()
    return forge.statusline():find("shell: sleep 30", 1, true) ~= nil -- the turn's progress message
  end)
  local mark = #t.notes
  vim.cmd("ForgeCancel")
  t.wait(10000, "the cancel was not told", function()
    return #cancelled_notes(mark) > 0
  end)
  vim.wait(300)
  local said = cancelled_notes(mark)
  assert(#said == 1 and said[1].msg == "Forge: turn cancelled; the running shell command was killed (sleep 30)", vim.inspect(t.notes))
  hide_starts = false

  -- The model is answering (its tool call has ended): nothing is killed, and the cancel says so.
  script({ { tool_calls = { { name = "todo_read", arguments = vim.empty_dict() } } }, { delay_ms = 30000, text = "late" } })
  local finished = #t.of_type("toolCallFinished")
  vim.cmd("ForgeRun slow model")
  t.wait(30000, "the tool call did not end", function()
    return #t.of_type("toolCallFinished") > finished
  end)
  mark = #t.notes
  vim.cmd("ForgeCancel")
  t.wait(10000, "the cancel was not told", function()
    return #cancelled_notes(mark) > 0
  end)
  vim.wait(300)
  said = cancelled_notes(mark)
  assert(#said == 1 and said[1].msg == "Forge: turn cancelled; the model's reply was stopped", vim.inspect(t.notes))
  mark = #t.notes
  vim.cmd("ForgeCancel")
  t.wait(10000, "no answer", function()
    return #t.notes_with("Forge: no turn is running", mark) == 1
  end)

  -- :ForgeLog: a turn on a selection with unsaved changes logs the prompt and one context line.
  script({ { text = "It sets x." } })
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "x = 1", "y = 2 # not saved yet", "z = 3" })
  local before = t.finished_turns()
  forge.run("explain these\nlines please", { range = 2, line1 = 1, line2 = 2 })
  t.wait(60000, "the turn did not end", function()
    return t.finished_turns() > before
  end)
  local started = t.of_type("turnStarted")
  local context = started[#started].context
  assert(type(context) == "table" and context.unsaved and context.range, vim.inspect(context))
  assert(started[#started].prompt:find("Context from the editor:", 1, true), "the server's prompt carries no context")
  local log = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
  local at = log:find("explain these", 1, true)
  assert(at, log)
  local entry = log:sub(log:sub(1, at):match(".*()▶") or 1)
  entry = entry:sub(1, (entry:find("\n  assistant:", 1, true) or #entry + 1) - 1)
  t.out("ENTRY\n" .. entry)
  local lines = vim.split(entry, "\n", { plain = true })
  assert(#lines == 3, entry)
  assert(lines[1]:find("started %(model scripted/script%.json%): explain these$"), lines[1])
  assert(lines[2] == "  lines please", lines[2])
  assert(lines[3] == "  context: main.py (lines 1-2); unsaved in the editor: main.py", lines[3])
  assert(not log:find("Context from the editor", 1, true) and not log:find("not saved yet", 1, true), log)
end, debug.traceback)

t.finish(ok, err)
