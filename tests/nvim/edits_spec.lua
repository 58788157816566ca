-- Issue 25 items 3 and 4, headless: the agent's edits to an open buffer (marks and the cursor stay)
-- and the review of an edit before it lands (edit_review = "confirm"). The real server on the
-- scripted model; env as issue24_spec.lua; FORGE_SECTIONS picks sections. Prints PASS/FAIL.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, wait, script, events, turn, wanted = t.ws, t.wait, t.script, t.events, t.turn, t.wanted
t.deadline(100000)

local function patch(path, old, new)
  return { tool_calls = { { name = "patch", arguments = { file_path = path, old_string = old, new_string = new } } } }
end

t.setup({ reply = "none" })

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false)
end

vim.schedule(function()
local ok, err = pcall(function()
  -- Item 3: an extmark on an untouched line stays on its line, and so does the cursor.
  if wanted("marks") then
    vim.cmd("edit " .. ws .. "/main.py")
    local buf = vim.api.nvim_get_current_buf()
    t.wait_server()
    local ns = vim.api.nvim_create_namespace("forge_edits_spec")
    local above = vim.api.nvim_buf_set_extmark(buf, ns, 0, 3, {})
    local below = vim.api.nvim_buf_set_extmark(buf, ns, 4, 2, {})
    vim.api.nvim_win_set_cursor(0, { 5, 3 })
    script({ patch("main.py", "port = 8080", "port = 9090"), { text = "done" } })
    turn("ForgeRun change the port")
    wait(5000, "the edit did not land", function()
      return lines(buf)[3] == "port = 9090"
    end)
    assert(table.concat(lines(buf), "|") == "import os|\t# tabs|port = 9090|host = 'é😀'|end", table.concat(lines(buf), "|"))
    local a = vim.api.nvim_buf_get_extmark_by_id(buf, ns, above, {})
    local b = vim.api.nvim_buf_get_extmark_by_id(buf, ns, below, {})
    assert(a[1] == 0 and a[2] == 3, "the mark on line 1 moved: " .. vim.inspect(a))
    assert(b[1] == 4 and b[2] == 2, "the mark on line 5 moved: " .. vim.inspect(b))
    local cursor = vim.api.nvim_win_get_cursor(0)
    assert(cursor[1] == 5, "the cursor left its line: " .. vim.inspect(cursor))
    vim.cmd("silent write")
  end

  -- Item 4: edit_review = "confirm". The diff is shown and the user asked; Accept lands, Reject is
  -- the tool's failure, Accept all takes the rest of the turn (a file not open included, written).
  if wanted("review") then
    vim.cmd("edit " .. ws .. "/main.py")
    local buf = vim.api.nvim_get_current_buf()
    t.wait_server()
    -- Headless, with no UI to ask in, the edit is refused with the reason (never applied unseen).
    script({ patch("main.py", "port = 8080", "port = 9090"), { text = "no UI" } })
    local before_noui = #events
    turn("ForgeRun change the port without a UI")
    local noui
    for i = before_noui + 1, #events do
      if events[i].type == "toolCallFinished" then
        noui = events[i]
      end
    end
    assert(noui and not noui.ok and noui.output:find("Neovim has no UI to review the edit in", 1, true), vim.inspect(noui))
    assert(lines(buf)[3] == "port = 8080", vim.inspect(lines(buf)))
    local asked, answers = {}, {}
    vim.api.nvim_list_uis = function()
      return { {} }
    end
    vim.ui.select = function(items, opts, on_choice)
      local review = vim.fn.bufnr("forge://review")
      local shown = review ~= -1 and table.concat(vim.api.nvim_buf_get_lines(review, 0, -1, false), "\n") or ""
      table.insert(asked, { prompt = opts.prompt, items = items, diff = shown })
      on_choice(table.remove(answers, 1))
    end
    -- Accept
    answers = { "Accept" }
    script({ patch("main.py", "port = 8080", "port = 9090"), { text = "done" } })
    local finished = turn("ForgeRun change the port")
    assert(#asked == 1, vim.inspect(asked))
    assert(asked[1].prompt == "Forge: patch main.py: apply this edit?", asked[1].prompt)
    assert(table.concat(asked[1].items, "|") == "Accept|Reject|Accept all for this turn", vim.inspect(asked[1].items))
    assert(asked[1].diff:find("-port = 8080", 1, true) and asked[1].diff:find("+port = 9090", 1, true), asked[1].diff)
    assert(lines(buf)[3] == "port = 9090", vim.inspect(lines(buf)))
    assert(finished.status == "completed", vim.inspect(finished))
    -- Reject (and a dismissed question is a rejection too)
    asked, answers = {}, { "Reject" }
    script({ patch("main.py", "port = 9090", "port = 1"), { text = "ok, not changed" } })
    local before = #events
    turn("ForgeRun change it again")
    assert(#asked == 1 and lines(buf)[3] == "port = 9090", vim.inspect(lines(buf)))
    local failed
    for i = before + 1, #events do
      if events[i].type == "toolCallFinished" then
        failed = events[i]
      end
    end
    assert(failed and not failed.ok, vim.inspect(failed))
    assert(failed.output:find("the user rejected the edit to main.py", 1, true), failed.output)
    -- Accept all for this turn: the second edit (a file not open) is not asked about, and is written.
    asked, answers = {}, { "Accept all for this turn" }
    script({
      { tool_calls = {
        { name = "patch", arguments = { file_path = "main.py", old_string = "end", new_string = "finish" } },
        { name = "write", arguments = { file_path = "docs/notes.txt", content = "agent notes\n" } },
        { name = "remove", arguments = { path = "old.txt" } },
      } },
      { text = "done" },
    })
    turn("ForgeRun two edits")
    assert(#asked == 1, "asked " .. #asked .. " times: " .. vim.inspect(asked))
    assert(lines(buf)[5] == "finish", vim.inspect(lines(buf)))
    wait(5000, "docs/notes.txt not written", function()
      return vim.fn.filereadable(ws .. "/docs/notes.txt") == 1
    end)
    assert(table.concat(vim.fn.readfile(ws .. "/docs/notes.txt"), "|") == "agent notes", "docs/notes.txt")
    assert(vim.fn.filereadable(ws .. "/old.txt") == 0, "old.txt was not removed")
    -- A new file's diff has its lines, no empty "+" line after them (the text ends in a newline).
    local uri = vim.uri_from_fname(ws .. "/new.txt")
    local created = require("forge.review").diff_lines({ documentChanges = {
      { kind = "create", uri = uri },
      { textDocument = { uri = uri, version = vim.NIL }, edits = {
        { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }, newText = "one\ntwo\n" },
      } },
    } }, "utf-16")
    local shown = table.concat(created, "|")
    assert(shown:find("^%-%-%- /dev/null|%+%+%+ b/.*new%.txt|@@ %-0,0 %+1,2 @@|%+one|%+two$"), shown)
    -- The next turn asks again.
    asked, answers = {}, { "Accept" }
    script({ patch("main.py", "finish", "end"), { text = "done" } })
    turn("ForgeRun undo that")
    assert(#asked == 1 and lines(buf)[5] == "end", vim.inspect(asked))
    vim.cmd("silent! wall")
  end
end)

t.finish(ok, err)
end)
