-- Issue 27 (agents), headless: :ForgeAgent with <Tab> completion, the pick, the statusline, a turn
-- under sage, on the real server and the scripted model. Env as test_nvim.py's _workspaces (the
-- user's agents folder holds reviewer.md). Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, noted, wait, script, events = t.ws, t.noted, t.wait, t.script, t.events
t.deadline(80000)
local forge = t.setup()

vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/main.py")
    t.wait_server()
    -- <Tab> after :ForgeAgent: the server's agents, the user's reviewer among them.
    local all = vim.fn.getcompletion("ForgeAgent ", "cmdline")
    assert(table.concat(all, ",") == "forge,muse,sage,reviewer", vim.inspect(all))
    local s = vim.fn.getcompletion("ForgeAgent s", "cmdline")
    assert(table.concat(s, ",") == "sage", vim.inspect(s))
    assert(forge.statusline() == "Forge: idle", forge.statusline())

    -- The conversation's agent set behind the plugin's back (as after a restart: it is kept with the
    -- conversation): the statusline cannot know it yet; the next turn's turnStarted tells it.
    t.answer(10000, "sage not set", function(done)
      require("forge.client").execute("forge.setAgent", { id = "sage" }, done)
    end)
    assert(forge.statusline() == "Forge: idle", forge.statusline())

    -- A turn under sage: its write is refused, nothing written.
    script({ { tool_calls = { { name = "write", arguments = { file_path = "notes.txt", content = "x" } } } }, { text = "ok" } })
    vim.cmd("ForgeRun write notes.txt")
    wait(60000, "no end of turn", function()
      return t.finished_turns() == 1
    end)
    assert(vim.fn.filereadable(ws .. "/notes.txt") == 0, "sage wrote a file")
    local refused = false
    for _, e in ipairs(events) do
      if e.type == "toolCallFinished" and not e.ok and tostring(e.output):find("not available to agent sage", 1, true) then
        refused = true
      end
      if e.type == "turnStarted" then
        assert(e.agent == "sage", vim.inspect(e))
      end
    end
    assert(refused, vim.inspect(events))
    assert(forge.statusline():find("^Forge %(sage%): idle"), forge.statusline())

    -- :ForgeAgent forge: the default again; the statusline no longer names an agent.
    vim.cmd("ForgeAgent forge")
    wait(10000, "forge not set", function()
      return noted("Forge: agent forge for this conversation") ~= nil
    end)
    assert(forge.statusline():find("^Forge: idle"), forge.statusline())

    -- An unknown id: one error line naming the agents.
    vim.cmd("ForgeAgent nope")
    wait(10000, "no error for an unknown agent", function()
      return noted("unknown agent 'nope'; agents: forge, muse, sage, reviewer") ~= nil
    end)
    assert(noted("unknown agent").level == vim.log.levels.ERROR)
    local told = noted("unknown agent").msg
    assert(told:find("^Forge: forge%.setAgent: unknown agent") ~= nil, told) -- the command named once

    -- :ForgeAgent alone: a pick of every agent, the current one marked.
    local asked
    vim.ui.select = function(items, opts, on_choice)
      local titles = {}
      for _, item in ipairs(items) do
        table.insert(titles, opts.format_item(item))
      end
      asked = { titles = titles, items = items, on_choice = on_choice, prompt = opts.prompt }
    end
    vim.cmd("ForgeAgent")
    wait(10000, "no pick", function()
      return asked ~= nil
    end)
    assert(asked.prompt == "Forge agent (now forge)", asked.prompt)
    assert(#asked.titles == 4 and asked.titles[1]:find("^forge %(current%) · Forge — "), vim.inspect(asked.titles))
    assert(asked.titles[3]:find("^sage · Sage — "), vim.inspect(asked.titles))
    assert(asked.titles[4]:find("^reviewer · Reviewer — Reviews code"), vim.inspect(asked.titles))
    asked.on_choice(asked.items[2], 2)
    wait(10000, "muse not set", function()
      return forge.statusline():find("^Forge %(muse%): idle") ~= nil
    end)
    -- A new conversation starts with forge.
    vim.cmd("ForgeNew")
    wait(10000, "no new conversation", function()
      return forge.statusline():find("^Forge: idle") ~= nil
    end)
  end)
  t.finish(ok, err)
end)
