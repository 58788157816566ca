-- Issue 24 (first use, round two), headless: the plugin's handlers driven directly, and the real
-- server on the scripted model. Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, out, notes, notes_with, wait = t.ws, t.out, t.notes, t.notes_with, t.wait
local script, shell, events, finished_turns, turn, wanted = t.script, t.shell, t.events, t.finished_turns, t.turn, t.wanted
t.deadline(100000)

-- A UI to ask in (headless has none), and a vim.ui.select that keeps what it was asked.
local real_uis, real_select = vim.api.nvim_list_uis, vim.ui.select
local asked = {}
local function fake_ui()
  vim.api.nvim_list_uis = function()
    return { {} }
  end
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(asked, { prompt = opts.prompt, titles = titles, items = items, on_choice = on_choice })
  end
end
local function real_ui()
  vim.api.nvim_list_uis, vim.ui.select = real_uis, real_select
end

local forge = t.setup()

-- After startup (VimEnter): where a user meets the plugin.
vim.schedule(function()
local ok, err = pcall(function()
  -- 4. The Trust question is not held open, is asked after the handler returned, and a dismissed
  -- question (Escape, a stray ":w" at the numbered list) leaves the workspace untrusted, saying how
  -- to trust it.
  if wanted("trust") then
    local prompts = require("forge.prompts")
    fake_ui()
    local answer = prompts.on_message_request(nil, {
      type = 2,
      message = "Forge: project is not trusted, so its settings are ignored (model). Trust this workspace?",
      actions = { { title = "Trust" }, { title = "Not now" } },
    })
    assert(answer == vim.NIL, "the trust request was answered " .. vim.inspect(answer))
    assert(#asked == 0, "the trust question was asked while the server's request was held")
    wait(2000, "the trust question was never asked", function()
      return #asked == 1
    end)
    assert(table.concat(asked[1].titles, "|") == "Trust|Not now", vim.inspect(asked[1].titles))
    asked[1].on_choice(nil, nil)
    wait(2000, "no hint after a dismissed trust question", function()
      return #notes_with(":ForgeTrust") == 1
    end)
    local hint = notes_with(":ForgeTrust")[1]
    assert(hint.level == vim.log.levels.WARN and not hint.msg:find("\n"), vim.inspect(hint))
    real_ui()
    asked = {}
  end

  -- 9. The Continue question offers Stop too; a dismissed one leaves the turn interrupted (the
  -- statusline and :ForgeStatus agree) and :ForgeContinue continues it; Stop ends it.
  if wanted("continue") then
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    fake_ui()
    script({ shell("exit 1"), shell("exit 1"), shell("exit 1") })
    turn("ForgeRun break things")
    wait(10000, "no Continue question", function()
      return #asked == 1
    end)
    assert(table.concat(asked[1].titles, "|") == "Continue|Stop", vim.inspect(asked[1].titles))
    asked[1].on_choice(nil, nil)
    wait(5000, "no hint after a dismissed Continue", function()
      return #notes_with("Forge: turn left interrupted; :ForgeContinue continues it") == 1
    end)
    assert(forge.statusline():find("^Forge: interrupted"), forge.statusline())
    t.answer(10000, "no status", forge.status)
    assert(#notes_with("Forge: interrupted (:ForgeContinue) · model ") == 1, "status disagrees")
    script({ { text = "recovered" } })
    turn("ForgeContinue")
    assert(events[#events].status == "completed", vim.inspect(events[#events]))
    assert(forge.statusline():find("^Forge: idle"), forge.statusline())
    local started
    for _, e in ipairs(events) do
      if e.type == "turnStarted" then
        started = e
      end
    end
    assert(started.prompt:find("^Continue%."), started.prompt)
    -- Stop: the turn is over; nothing left to continue.
    asked = {}
    script({ shell("exit 1"), shell("exit 1"), shell("exit 1") })
    turn("ForgeRun break things again")
    wait(10000, "no Continue question", function()
      return #asked == 1
    end)
    local finished = finished_turns()
    asked[1].on_choice(asked[1].items[2], 2)
    wait(5000, "Stop not taken", function()
      return forge.statusline():find("^Forge: idle") ~= nil
    end)
    vim.cmd("ForgeContinue")
    assert(#notes_with("Forge: no interrupted turn to continue") == 1, "continued after Stop")
    vim.wait(500)
    assert(finished_turns() == finished, "a turn ran after Stop")
    real_ui()
    asked = {}
  end

  -- 7. A question turn's reply is shown where the user looks: a float at the cursor (default), the
  -- split forge://reply (reply = "split"), or nowhere but the log (reply = "none").
  if wanted("reply") then
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    vim.cmd("only")
    local function floats()
      local found = {}
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= "" then
          table.insert(found, win)
        end
      end
      return found
    end
    local function text_of(win)
      return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
    end
    script({ { text = "These lines set x.\n\nNothing else happens." } })
    turn("1,1ForgeRun explain these lines")
    wait(2000, "no reply float", function()
      return #floats() == 1
    end)
    local shown = text_of(floats()[1])
    assert(shown:find("These lines set x.", 1, true) and shown:find("Nothing else happens.", 1, true), shown)
    -- It goes when the cursor moves, as a hover does.
    vim.api.nvim_win_close(floats()[1], true)
    forge.setup({ reply = "split" })
    local here = vim.api.nvim_get_current_win()
    script({ { text = "A split reply." } })
    turn("ForgeRun explain again")
    local reply_win
    wait(2000, "no reply split", function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)) == "forge://reply" then
          reply_win = win
        end
      end
      return reply_win ~= nil
    end)
    assert(text_of(reply_win) == "A split reply.", text_of(reply_win))
    assert(vim.api.nvim_get_current_win() == here, "the reply split took the cursor")
    assert(#floats() == 0, "a float as well")
    vim.api.nvim_win_close(reply_win, true)
    forge.setup({ reply = "none" })
    local wins = #vim.api.nvim_list_wins()
    script({ { text = "Only in the log." } })
    turn("ForgeRun once more")
    vim.wait(200)
    assert(#vim.api.nvim_list_wins() == wins, "a window opened with reply = none")
    forge.setup({ reply = "float" })
  end

  -- 12. :ForgeRun alone asks for the prompt (vim.ui.input; <Esc> runs nothing); <Plug> mappings.
  if wanted("input") then
    forge.setup({ reply = "none" })
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    local real_input = vim.ui.input
    local inputs, answer_with = {}, nil
    vim.ui.input = function(opts, on_confirm)
      table.insert(inputs, opts.prompt)
      on_confirm(answer_with)
    end
    local before = finished_turns()
    vim.cmd("ForgeRun")
    assert(#inputs == 1 and inputs[1] == "Forge prompt: ", vim.inspect(inputs))
    vim.wait(300)
    assert(finished_turns() == before, "a turn ran on <Esc>")
    answer_with = "explain this file"
    script({ { text = "It sets x." } })
    turn("ForgeRun")
    local started
    for _, e in ipairs(events) do
      if e.type == "turnStarted" then
        started = e
      end
    end
    assert(started.prompt:find("explain this file", 1, true), started.prompt)
    for _, name in ipairs({ "run", "cancel", "continue", "status", "log", "new", "conversations", "config", "trust" }) do
      assert(vim.fn.maparg("<Plug>(forge-" .. name .. ")", "n") ~= "", "no <Plug>(forge-" .. name .. ")")
    end
    assert(vim.fn.maparg("<Plug>(forge-run)", "x") ~= "", "no <Plug>(forge-run) in Visual mode")
    -- A keymap of one's own on the <Plug> mapping, from Visual mode: the selection goes along.
    vim.keymap.set("x", "<F5>", "<Plug>(forge-run)", { remap = true })
    answer_with = "explain these lines"
    script({ { text = "They set x." } })
    before = finished_turns()
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("ggV<F5>", true, false, true), "x", false)
    wait(60000, "the <Plug> mapping ran no turn", function()
      return finished_turns() > before
    end)
    for _, e in ipairs(events) do
      if e.type == "turnStarted" then
        started = e
      end
    end
    assert(started.prompt:find("explain these lines", 1, true) and started.prompt:find("selected lines 1%-1"), started.prompt)
    vim.ui.input = real_input
    forge.setup({ reply = "float" })
  end

  -- 14. Noise and wording: no "Workspace edit Forge" per patch; counts in the singular where one;
  -- :ForgeNew's short id; :ForgeConversations in tokens and times people read; :ForgeConfig's
  -- columns in line and no "nil"; a read-only log; a cancel says the shell was killed.
  if wanted("wording") then
    forge.setup({ reply = "none" })
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    local printed = {}
    local real_print = _G.print
    _G.print = function(...)
      table.insert(printed, table.concat(vim.tbl_map(tostring, { ... }), " "))
    end
    local mark = #notes
    local patch = { tool_calls = { { name = "patch", arguments = { file_path = "main.py", old_string = "x = 1", new_string = "x = 2" } } } }
    script({ patch, { text = "Patched." } })
    turn("ForgeRun patch it")
    _G.print = real_print
    assert(vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == "x = 2", "the edit was not applied")
    assert(#printed == 0, "printed: " .. vim.inspect(printed))
    assert(#notes_with("Forge: turn completed (2 requests, 1 tool call, 0 failures)", mark) == 1, "plural")
    script({ { text = "One.", usage = { prompt_tokens = 2000, completion_tokens = 100 } } })
    turn("ForgeRun once")
    assert(#notes_with("Forge: turn completed (1 request, 0 tool calls, 0 failures)", mark) == 1, "singular")
    script({ shell("exit 1"), shell("exit 1"), { text = "ok" } })
    turn("ForgeRun retry")
    assert(#notes_with("Forge: shell failed; 2 attempts left", mark) == 1, "attempts")
    assert(#notes_with("Forge: shell failed; 1 attempt left", mark) == 1, "attempt")
    -- :ForgeNew: the short id
    local new = t.answer(10000, "no new conversation", forge.new_conversation)
    local told = notes_with("Forge: new conversation ", mark)
    assert(#told == 1 and told[1].msg == "Forge: new conversation " .. new.conversationId:sub(1, 8), vim.inspect(told))
    -- :ForgeConversations: "2.1k tokens", "just now"
    fake_ui()
    vim.cmd("ForgeConversations")
    wait(10000, "no conversation list", function()
      return #asked == 1
    end)
    local listed = table.concat(asked[1].titles, "\n")
    assert(listed:find(" · %d+ turns · %d+%.%dk tokens · just now"), listed)
    assert(listed:find("(no turn yet) · 0 turns · 0 tokens · just now", 1, true), listed)
    assert(not listed:find("%d%dT%d%d:") and not listed:find("%f[%d]1 turns"), listed)
    asked[1].on_choice(nil, nil)
    real_ui()
    asked = {}
    -- :ForgeConfig: the sources in one column, no nil
    t.answer(10000, "no config", forge.show_config)
    local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://config"), 0, -1, false)
    -- key, source, value: the sources in one column, the values in another
    local source_at, value_at
    for _, line in ipairs(lines) do
      assert(not line:find("nil", 1, true), line)
      local key, gap1, source, gap2 = line:match("^(%S+)(%s+)(%a+)(%s+)")
      assert(key, line)
      local s_at, v_at = #key + #gap1 + 1, #key + #gap1 + #source + #gap2 + 1
      source_at, value_at = source_at or s_at, value_at or v_at
      assert(s_at == source_at and v_at == value_at, "misaligned:\n" .. table.concat(lines, "\n"))
    end
    assert(("\n" .. table.concat(lines, "\n")):find("\napi_base%s+default%s+%(not set%)\n"), table.concat(lines, "\n"))
    vim.cmd("close")
    -- the log is read-only, and still grows
    local logbuf = vim.fn.bufnr("forge://log")
    assert(vim.bo[logbuf].modifiable == false, "the log buffer is modifiable")
    -- a cancel names the killed shell
    script({ shell("sleep 30"), { text = "never" } })
    vim.cmd("ForgeRun wait")
    wait(30000, "no shell running", function()
      return forge.statusline():find("^Forge: running shell") ~= nil
    end)
    local before = finished_turns()
    vim.cmd("ForgeCancel")
    wait(10000, "no cancel", function()
      return finished_turns() > before
    end)
    wait(2000, "the cancel did not say the shell was killed", function()
      return #notes_with("Forge: turn cancelled; the running shell command was killed", mark) == 1
    end)
    forge.setup({ reply = "float" })
  end

  -- 11. After a failed turn the statusline is idle, without the failed turn's prompt.
  if wanted("failed") then
    forge.setup({ reply = "none" })
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    os.remove(ws .. "/script.json")
    turn("ForgeRun hi there")
    assert(events[#events].status == "failed", vim.inspect(events[#events]))
    vim.wait(300)
    local line = forge.statusline()
    assert(line:find("^Forge: idle") and not line:find("hi there", 1, true), line)
    forge.setup({ reply = "float" })
  end

  -- 13. :checkhealth forge in a trusted workspace: every line about trust has a level.
  if wanted("health") then
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    vim.cmd("checkhealth forge")
    local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    assert(report:find("the server trusts this workspace", 1, true), report)
    -- Issue 34: no advice that trusts more than the user read (Neovim's own store covers .forge.toml alone).
    assert(not report:find("adds it", 1, true) and not report:find("does not list", 1, true), report)
    local seen = 0
    for _, l in ipairs(vim.split(report, "\n")) do
      if l:find("trust", 1, true) then
        seen = seen + 1
        assert(l:find("OK", 1, true) or l:find("WARNING", 1, true), "no level: " .. l)
      end
    end
    assert(seen > 0, report)
    vim.cmd("bwipeout")
  end

  -- 11b. A turn refused before it started (no model: FORGE_SECTIONS=nomodel, a workspace whose only
  -- model is its own, untrusted .forge.toml): the statusline is idle, without the refused prompt.
  if os.getenv("FORGE_SECTIONS") == "nomodel" then
    vim.cmd("silent! wall | edit " .. ws .. "/main.py")
    t.wait_server()
    vim.cmd("ForgeRun hi there")
    wait(30000, "the turn was not refused", function()
      return #notes_with("no model is set") == 1
    end)
    vim.wait(500)
    local line = forge.statusline()
    assert(line == "Forge: idle", line)
    -- 13. :checkhealth forge says why there is no model and how to trust; every line has a level.
    vim.cmd("checkhealth forge")
    local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    out("HEALTH\n" .. report)
    assert(not report:find("model nil", 1, true), report)
    assert(report:find("no model: the workspace's model is ignored because the workspace is not trusted", 1, true), report)
    assert(report:find(":ForgeTrust", 1, true), report)
    for _, l in ipairs(vim.split(report, "\n")) do
      if l:find("trust store", 1, true) then
        assert(l:find("OK", 1, true) or l:find("WARNING", 1, true) or l:find("INFO", 1, true), "no level: " .. l)
      end
    end
  end
end)

t.finish(ok, err)
end)
