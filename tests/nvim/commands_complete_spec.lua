-- :ForgeCommand <Tab> before the server has started, and before it answered: the built-in commands and
-- the user's and the workspace's own (names read from their files) at once, no server started; once the
-- server is up its list (forge.listCommands) is asked for in the background and used. Env as
-- test_nvim.py's _workspaces, plus .forge/commands/greet.md, ship.md (name: deploy), bad.name.md
-- (no command name) and README.md (no front matter), and the user's hello.md and broken.md (names an
-- agent that does not exist: the server does not load it).
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws = t.ws
t.deadline(80000)

local forge = t.setup()

--- :ForgeCommand <Tab> after typed: the names, and how long the completion took (ms).
local function tab(typed)
  return t.complete("ForgeCommand " .. (typed or ""))
end

local FROM_FILES = "broken,deploy,explain,greet,hello,review,test"
local FROM_SERVER = "deploy,explain,greet,hello,review,test"

vim.schedule(function()
  local ok, err = pcall(function()
    -- No server yet (no file open): the built-in commands, the user's, the workspace's; none started.
    vim.cmd("cd " .. ws)
    local names, ms = tab()
    assert(names == FROM_FILES, names)
    assert(ms < 500, "completion took " .. ms .. " ms")
    assert(forge.get_client() == nil, "the completion started a server")
    assert(tab("de") == "deploy", tab("de"))
    assert(tab("/gr") == "greet", tab("/gr"))
    assert(tab("greet A") == "", tab("greet A"))
    t.out("PASS no server")

    -- The server starting (.forge.toml: it starts on opening a file), not answering yet: the same, at once.
    vim.cmd("edit " .. ws .. "/main.py")
    local starting = forge.get_client()
    assert(starting ~= nil, "no server started")
    assert(not starting.initialized, "the server answered too soon for this test")
    names, ms = tab()
    assert(names == FROM_FILES, names)
    assert(ms < 500, "completion waited for the server: " .. ms .. " ms")
    t.out("PASS server starting")

    -- Once it is up: its list (broken.md does not load), asked in the background and kept.
    t.wait_server()
    local last
    local came = vim.wait(10000, function()
      last = tab()
      return last == FROM_SERVER
    end, 50)
    assert(came, "the server's list never came: " .. tostring(last))
    names, ms = tab("h")
    assert(names == "hello", names)
    assert(ms < 500, "completion took " .. ms .. " ms")
    -- Completion says nothing; the one message is the server's, once, about the broken file (not open).
    assert(#t.notes == 1 and t.notes[1].msg:find("/broken.md:2)", 1, true), vim.inspect(t.notes))
  end)
  t.finish(ok, err)
end)
