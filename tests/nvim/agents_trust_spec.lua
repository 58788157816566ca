-- :ForgeAgent <Tab> after :ForgeTrust: the workspace's agents (.forge/agents/) come with the first <Tab>
-- once the workspace is trusted, not the list the server gave before (without them). Env as
-- test_nvim.py's _workspaces, the workspace untrusted (its .forge/agents/plan.md, id planner, written
-- after it was trusted), and the user's reviewer.md. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws = t.ws
t.deadline(60000)

local forge = t.setup()

local function tab()
  return table.concat(vim.fn.getcompletion("ForgeAgent ", "cmdline"), ",")
end

vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/main.py")
    t.wait_server()
    local last
    assert(vim.wait(10000, function()
      last = tab()
      return last == "forge,muse,sage,reviewer"
    end, 50), "the untrusted workspace's list never came: " .. tostring(last))
    vim.cmd("ForgeTrust")
    t.wait(10000, "no answer to :ForgeTrust", function()
      return t.noted("Forge: trusted ") ~= nil
    end)
    vim.wait(1500) -- a person reads the message, then types :ForgeAgent <Tab>
    last = tab()
    assert(last == "forge,muse,sage,planner,reviewer", "the first <Tab> after :ForgeTrust: " .. last)
  end)
  t.finish(ok, err)
end)
