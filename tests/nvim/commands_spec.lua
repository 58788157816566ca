-- :ForgeCommand in headless Neovim against the real server: completion of the names (forge.listCommands),
-- a command run with its arguments, one picked and asked for, and an unknown one told in one line.
-- Env: FORGE_PYTHON, FORGE_WORKSPACE (trusted; .forge/commands/greet.md; main.py), FORGE_PLUGIN.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, out, notes, script, events = t.ws, t.out, t.notes, t.script, t.events
local wait, finished_turns = t.wait, t.finished_turns
t.deadline(100000)
local deprecated = t.watch_deprecated()

local function transcript_prompts()
  local found = {}
  for _, path in ipairs(vim.fn.glob(ws .. "/.forge/transcripts/*.md", false, true)) do
    local text = table.concat(vim.fn.readfile(path), "\n")
    table.insert(found, (text:match("## Prompt\n\n([^\n]*)")))
  end
  return found
end

local forge = t.setup()

local ok, err = pcall(function()
  vim.cmd("edit " .. ws .. "/main.py")
  t.wait_server()

  -- Completion: the names (built-in and the workspace's), those starting with what is typed, none past the name.
  local all = vim.fn.getcompletion("ForgeCommand ", "cmdline")
  assert(vim.deep_equal(all, { "explain", "greet", "hi", "review", "test" }), vim.inspect(all))
  local some = vim.fn.getcompletion("ForgeCommand gr", "cmdline")
  assert(vim.deep_equal(some, { "greet" }), vim.inspect(some))
  local after = vim.fn.getcompletion("ForgeCommand greet A", "cmdline")
  assert(#after == 0, vim.inspect(after))
  out("PASS completion")

  -- :ForgeCommand name args runs the command: the server expands it.
  script({ { text = "Bonjour, Ada." } })
  vim.cmd("ForgeCommand greet Ada Lovelace")
  wait(30000, "no turn for :ForgeCommand greet", function()
    return finished_turns() == 1
  end)
  assert(events[#events].summary.status == "completed", vim.inspect(events[#events]))
  local prompts = transcript_prompts()
  assert(vim.tbl_contains(prompts, "Say hello to Ada Lovelace in French."), vim.inspect(prompts))
  out("PASS run with args")

  -- :ForgeCommand alone: pick one (vim.ui.select), give its arguments (vim.ui.input).
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(opts.format_item, items)
    for _, item in ipairs(items) do
      if item.name == "explain" then
        return on_choice(item)
      end
    end
  end
  local asked
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm("main.py")
  end
  script({ { text = "It sets x." } })
  vim.cmd("ForgeCommand")
  wait(30000, "no turn for the picked command", function()
    return finished_turns() == 2
  end)
  assert(offered and offered[2] == "/greet · Greet someone (workspace)", vim.inspect(offered))
  assert(asked == "/explain arguments (optional): ", tostring(asked))
  prompts = transcript_prompts()
  local explained = false
  for _, p in ipairs(prompts) do
    explained = explained or vim.startswith(p, "Explain main.py: what it does")
  end
  assert(explained, vim.inspect(prompts))
  out("PASS picked")

  -- A picked command whose prompt uses no {{args}} runs without asking for them.
  asked = nil
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.name == "hi" then
        return on_choice(item)
      end
    end
  end
  script({ { text = "Hi." } })
  vim.cmd("ForgeCommand")
  wait(30000, "no turn for the picked command without arguments", function()
    return finished_turns() == 3
  end)
  assert(asked == nil, "asked for arguments: " .. tostring(asked))
  assert(vim.tbl_contains(transcript_prompts(), "Say hi to the user."), vim.inspect(transcript_prompts()))
  out("PASS picked without arguments")

  -- With a range: the selected lines go along with the command's prompt, as with :ForgeRun.
  script({ { text = "It sets x to 1." } })
  vim.cmd("1,1ForgeCommand explain this line")
  wait(30000, "no turn for the ranged command", function()
    return finished_turns() == 4
  end)
  local ranged = false
  for _, path in ipairs(vim.fn.glob(ws .. "/.forge/transcripts/*.md", false, true)) do
    local text = table.concat(vim.fn.readfile(path), "\n")
    ranged = ranged or (text:find("Explain this line: what it does", 1, true) ~= nil
      and text:find("(The user selected lines 1-1 of main.py:)", 1, true) ~= nil)
  end
  assert(ranged, vim.inspect(transcript_prompts()))
  out("PASS range")

  -- An unknown command: one error line naming the commands; no turn.
  vim.cmd("ForgeCommand nope")
  wait(10000, "unknown command not told", function()
    for _, note in ipairs(notes) do
      if note.msg:find("unknown command /nope; the commands are /explain, /greet, /hi, /review, /test", 1, true) then
        return note.level == vim.log.levels.ERROR
      end
    end
    return false
  end)
  vim.wait(300)
  assert(finished_turns() == 4, "a turn ran for an unknown command")
  out("PASS unknown")
  assert(#deprecated == 0, "deprecated API used: " .. vim.inspect(deprecated))
end)

if ok then
  out("summary: ok")
  vim.schedule(function()
    os.exit(0)
  end)
else
  out("FAIL " .. tostring(err))
  vim.schedule(function()
    os.exit(1)
  end)
end
