-- :ForgeAgent <Tab> before the server has started, and before it answered: the workspace's and the
-- user's own agents are completed too (read from their files), at once; once the server is up its
-- list is asked for in the background and used. Env as test_nvim.py's _workspaces, plus
-- .forge/agents/plan.md (id: planner) and the user's reviewer.md and broken.md (not loadable).
-- Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws = t.ws
t.deadline(80000)

local forge = t.setup()

--- :ForgeAgent <Tab>: the ids, and how long the completion took (ms).
local function tab(typed)
  return t.complete("ForgeAgent " .. (typed or ""))
end

local FROM_FILES = "forge,muse,sage,broken,planner,reviewer"

vim.schedule(function()
  local ok, err = pcall(function()
    -- No server yet (no file open): the built-in agents, the user's, the workspace's; none started.
    vim.cmd("cd " .. ws)
    local ids, ms = tab()
    assert(ids == FROM_FILES, ids)
    assert(ms < 500, "completion took " .. ms .. " ms")
    assert(forge.get_client() == nil, "the completion started a server")
    local p = tab("p")
    assert(p == "planner", p)

    -- The server starting (.forge.toml: it starts on opening a file), not answering yet: the same, at once.
    vim.cmd("edit " .. ws .. "/main.py")
    local starting = forge.get_client()
    assert(starting ~= nil, "no server started")
    assert(not starting.initialized, "the server answered too soon for this test")
    ids, ms = tab()
    assert(ids == FROM_FILES, ids)
    assert(ms < 500, "completion waited for the server: " .. ms .. " ms")

    -- Once it is up: its list (broken.md does not load), asked in the background and kept.
    t.wait_server()
    local last
    local came = vim.wait(10000, function()
      last = tab()
      return last == "forge,muse,sage,planner,reviewer"
    end, 50)
    assert(came, "the server's list never came: " .. tostring(last))
    ids, ms = tab("r")
    assert(ids == "reviewer", ids)
    assert(ms < 500, "completion took " .. ms .. " ms")
    -- Completion says nothing; the one message is the server's, once, about the broken file (not open).
    assert(#t.notes == 1 and t.notes[1].msg:find("/broken.md:2)", 1, true), vim.inspect(t.notes))
  end)
  t.finish(ok, err)
end)
