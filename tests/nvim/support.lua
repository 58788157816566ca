-- What the headless specs (tests/nvim/*_spec.lua) share. A spec loads it from its own folder first:
--   local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
-- Loading it puts the plugin (FORGE_PLUGIN) on 'runtimepath' and captures vim.notify: t.notes holds
-- { msg, level } in order (what the user would see in the message area), each also printed as a
-- NOTE line. Env as tests/nvim/test_nvim.py's _workspaces. Neovim 0.7 (LuaJIT) and 0.11.
local M = {}

M.ws = os.getenv("FORGE_WORKSPACE")
M.uv = vim.uv or vim.loop
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))

function M.out(line)
  io.stdout:write(line .. "\n")
end

--- Print "FAIL timeout" and exit 3 when the spec has not ended within ms.
function M.deadline(ms)
  M.timer = M.uv.new_timer()
  M.timer:start(ms, 0, vim.schedule_wrap(function()
    M.out("FAIL timeout")
    os.exit(3)
  end))
end

M.notes = {}
vim.notify = function(msg, level)
  table.insert(M.notes, { msg = msg, level = level or vim.log.levels.INFO })
  M.out("NOTE " .. tostring(level) .. " " .. msg)
end

--- The notes holding pattern (plain text), from note number since (default: all of them).
function M.notes_with(pattern, since)
  local found = {}
  for i, note in ipairs(M.notes) do
    if i > (since or 0) and note.msg:find(pattern, 1, true) then
      table.insert(found, note)
    end
  end
  return found
end

--- The first note holding pattern, or nil.
function M.noted(pattern)
  return M.notes_with(pattern)[1]
end

function M.count_notes(pattern)
  return #M.notes_with(pattern)
end

function M.wait(ms, what, cond)
  assert(vim.wait(ms, cond, 20), what .. "; notes: " .. vim.inspect(M.notes))
end

--- start(done) asks the server something whose answer comes to done; wait up to ms for it and return it.
function M.answer(ms, what, start)
  local got
  start(function(result)
    got = result
  end)
  M.wait(ms, what, function()
    return got ~= nil
  end)
  return got
end

--- The scripted model's answers, in order (the workspace's script.json).
function M.script(responses)
  local f = assert(io.open(M.ws .. "/script.json", "w"))
  f:write(vim.json.encode({ responses = responses }))
  f:close()
end

--- A scripted answer that runs a shell command.
function M.shell(cmd, text)
  return { text = text, tool_calls = { { name = "shell", arguments = { command = cmd } } } }
end

--- The names passed to vim.deprecate from now on (each use would warn the user on newer Neovim).
function M.watch_deprecated()
  local deprecated = {}
  if vim.deprecate then
    local real_deprecate = vim.deprecate
    vim.deprecate = function(name, ...)
      table.insert(deprecated, name)
      return real_deprecate(name, ...)
    end
  end
  return deprecated
end

-- Every forge/event, in order (the on_event option that t.setup gives).
M.events = {}

--- require("forge").setup() on the real server (FORGE_PYTHON), with opts added; returns the module.
function M.setup(opts)
  local forge = require("forge")
  forge.setup(vim.tbl_extend("force", {
    cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" },
    on_event = function(event)
      table.insert(M.events, event)
    end,
  }, opts or {}))
  return forge
end

--- The events of one type, in order.
function M.of_type(kind)
  local found = {}
  for _, e in ipairs(M.events) do
    if e.type == kind then
      table.insert(found, e)
    end
  end
  return found
end

function M.finished_turns()
  return #M.of_type("turnFinished")
end

--- Run a :Forge command line, wait for n (default 1) more turns to finish; the last turnFinished.
function M.turn(cmdline, n)
  local before = M.finished_turns()
  vim.cmd(cmdline)
  M.wait(60000, "no end of turn for " .. cmdline, function()
    return M.finished_turns() >= before + (n or 1)
  end)
  local finished = M.of_type("turnFinished")
  return finished[#finished]
end

--- The completions of a command line as typed (e.g. "ForgeAgent p"), joined by commas, and how long
--- Neovim took to give them (ms).
function M.complete(cmdline)
  local start = M.uv.hrtime()
  local names = vim.fn.getcompletion(cmdline, "cmdline")
  return table.concat(names, ","), (M.uv.hrtime() - start) / 1e6
end

--- Wait for the forge client to be up (it starts when a workspace's buffer is opened).
function M.wait_server(what)
  M.wait(30000, what or "no server", function()
    local c = require("forge").get_client()
    return c ~= nil and c.initialized
  end)
end

-- FORGE_SECTIONS (comma-separated) picks the sections a spec runs; none given: all of them.
local sections = vim.split(os.getenv("FORGE_SECTIONS") or "", ",", { trimempty = true })
function M.wanted(name)
  return #sections == 0 or vim.tbl_contains(sections, name)
end

--- The spec's last line and exit: PASS (0) or FAIL with the error (1).
function M.finish(ok, err)
  M.out(ok and "PASS" or ("FAIL " .. tostring(err)))
  os.exit(ok and 0 or 1)
end

return M
