-- Headless Neovim as a real LSP client: the plugin against the real server on the scripted model.
-- Env: FORGE_PYTHON, FORGE_WORKSPACE (has .forge.toml, main.py, scripts), FORGE_GITONLY (a git-only
-- repository), FORGE_PLUGIN. Prints PASS/FAIL lines; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, uv, out, wait, script, shell = t.ws, t.uv, t.out, t.wait, t.script, t.shell
local count_notes, events, finished_turns = t.count_notes, t.events, t.finished_turns
local gitonly = os.getenv("FORGE_GITONLY")

local function finish(code, msg)
  out(msg)
  vim.schedule(function()
    os.exit(code)
  end)
end

t.deadline(150000)
-- No deprecated API (each use would warn the user on newer Neovim).
local deprecated = t.watch_deprecated()

local function forge_clients()
  local n = 0
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(get()) do
    if c.name == "forge" then
      n = n + 1
    end
  end
  return n
end

local function last_finished()
  for i = #events, 1, -1 do
    if events[i].type == "turnFinished" then
      return events[i]
    end
  end
  return nil
end

-- The log window's text, and its lines of questions with their answers.
local function log_text()
  return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
end

local function last_question()
  local found
  for _, line in ipairs(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false)) do
    if vim.startswith(line, "  ? ") then
      found = line
    end
  end
  return found or ""
end

-- What the statusline shows of the status, without the progress or usage after it.
local function status_is(status)
  local line = require("forge").statusline()
  return line == "Forge: " .. status or vim.startswith(line, "Forge: " .. status .. " · ")
end

-- Default settings: {} must reach the server as an object (no "unknown key" warning).
local forge = t.setup()

local ok, err = pcall(function()
  -- Root detection prefers .forge.toml: below a .git (monorepo) and above one (a nested repository).
  vim.fn.mkdir(gitonly .. "/sub/deep", "p")
  io.open(gitonly .. "/sub/.forge.toml", "w"):close()
  assert(forge.find_root(gitonly .. "/sub/deep/x.py") == gitonly .. "/sub", forge.find_root(gitonly .. "/sub/deep/x.py"))
  assert(forge.find_root(gitonly .. "/notes.txt") == gitonly, tostring(forge.find_root(gitonly .. "/notes.txt")))
  vim.fn.mkdir(ws .. "/vendor/lib/.git", "p")
  assert(forge.find_root(ws .. "/vendor/lib/a.py") == ws, tostring(forge.find_root(ws .. "/vendor/lib/a.py")))
  os.remove(gitonly .. "/sub/.forge.toml")

  -- A git repository without .forge.toml starts nothing on open.
  vim.cmd("edit " .. gitonly .. "/notes.txt")
  vim.wait(300)
  assert(forge_clients() == 0, "a server started for a git-only repository")

  -- .forge.toml starts it on open.
  vim.cmd("edit " .. ws .. "/main.py")
  wait(15000, "no server for .forge.toml", function()
    return forge_clients() == 1
  end)
  local client = forge.get_client()
  assert(client, "no client")
  wait(30000, "server did not initialize", function()
    return client.initialized
  end)
  assert(forge.statusline():find("Forge: idle"), forge.statusline())
  -- The Error's sign wins on a line that also has a Warning (a newcomer saw W on the interrupt's line).
  local forge_ns = vim.lsp.diagnostic.get_namespace(client.id)
  assert(vim.diagnostic.config(nil, forge_ns).severity_sort == true, vim.inspect(vim.diagnostic.config(nil, forge_ns)))
  assert(vim.diagnostic.config().severity_sort == false, "the user's own diagnostics config changed")

  -- 1. a demo-like turn: retries, several assistant messages, a reply on many lines.
  script({
    shell("exit 1", "Let me look at the configuration first."),
    shell("exit 2", "Not there.\nMaybe elsewhere."),
    { text = "Found it.\n\nThe port is now 9090." },
  })
  -- the user command (its range included); the turn's result is what turnFinished carries
  local finished = finished_turns()
  vim.cmd("2,3ForgeRun break things")
  wait(60000, "no forge.run result", function()
    return finished_turns() == finished + 1
  end)
  local result = last_finished().summary
  assert(result.status == "completed", "status " .. tostring(result.status))
  wait(5000, "no result notification", function()
    return count_notes("turn completed") == 1
  end)
  assert(count_notes("shell failed; 1 attempt left") == 1, "retry notes")
  local started = events[1]
  assert(started.type == "turnStarted" and started.prompt:find("selected lines 2%-3 of main.py"), started.prompt)
  -- the log holds one line per event and each assistant message whole
  local log = log_text()
  assert(log:find("↻ shell failed: 2 of 3 attempts left", 1, true), log)
  -- a failed call says why, as the CLI does (not a bare "✗ shell")
  assert(log:find("  ✗ shell failed: command exited with code 1\n", 1, true), log)
  assert(log:find("  assistant: Not there.\nMaybe elsewhere.\n", 1, true), log)
  assert(log:find("assistant: Found it.\n\nThe port is now 9090.", 1, true), log)
  assert(log:find("■ turn completed: 3 requests, 2 tool calls, 2 failures", 1, true), log)

  -- 2. an interrupt: headless, nobody to ask: told once, with the reason
  script({ shell("exit 1"), shell("exit 1"), shell("exit 1") })
  result = t.answer(60000, "no interrupted result", function(done)
    forge.run("break things", nil, done)
  end)
  assert(result.status == "interrupted", "status " .. tostring(result.status))
  assert(result.reason.kind == "MaxToolFailurePerTurnLimitReached" and result.reason.errors.shell == 3, vim.inspect(result.reason))
  wait(5000, "interrupt not told", function()
    return count_notes("Maximum tool failure limit (3)") >= 1
  end)
  vim.wait(300)
  assert(count_notes("Maximum tool failure limit (3)") == 1, "interrupt told more than once")
  assert(forge.statusline():find("interrupted"), forge.statusline())
  local transcript = ws .. "/.forge/transcripts/" .. result.turnId .. ".md"
  local tbuf = vim.uri_to_bufnr(vim.uri_from_fname(transcript))
  wait(5000, "diagnostics", function()
    return #vim.diagnostic.get(tbuf) >= 4
  end)
  for _, d in ipairs(vim.diagnostic.get(tbuf)) do
    assert(d.source == "forge", "source " .. tostring(d.source))
  end

  -- 3. Continue (auto_continue): the Continue turn's result is told too
  forge.setup({ auto_continue = true })
  script({ shell("exit 1"), shell("exit 1"), shell("exit 1"), { text = "recovered" } })
  local before = finished_turns()
  vim.cmd("ForgeRun break things")
  wait(60000, "no Continue turn", function()
    return finished_turns() == before + 2
  end)
  forge.setup({ auto_continue = false })
  wait(5000, "Continue result not told", function()
    return count_notes("turn completed") == 2
  end)
  assert(last_finished().status == "completed", vim.inspect(last_finished()))

  -- 4. a confirm question through vim.ui.select, answered Deny (an asynchronous picker where the
  -- request runs in a coroutine, 0.10+; a synchronous one before)
  local f = assert(io.open(ws .. "/.forge.toml", "a"))
  f:write('\n[tools.shell]\nconfirm = ["echo deploy*"]\n')
  f:close()
  vim.cmd("edit " .. ws .. "/.forge.toml")
  vim.cmd("write") -- didSave reloads the config on clients without file watchers
  vim.cmd("edit " .. ws .. "/main.py")
  -- A changed .forge.toml must be trusted again: :ForgeTrust, as a user would. Its answer is
  -- "trusted", or (a server without forge.trust) the server's error, told clearly.
  vim.cmd("ForgeTrust")
  wait(10000, "no trust answer", function()
    return count_notes("Forge: trusted " .. ws) + count_notes("Forge: forge.trust: ") == 1
  end)
  if os.getenv("FORGE_HAS_TRUST") == "1" then
    assert(count_notes("Forge: trusted " .. ws) == 1, "not trusted")
  end
  if vim.fn.has("nvim-0.9") == 1 then
    -- Neovim's own trust store learned it too (as :trust would write it), so checkhealth and the next
    -- start agree; the file was read without showing up among the buffers.
    local listed = require("forge.trust").neovim_trusts(ws)
    assert(listed == vim.fn.sha256(table.concat(vim.fn.readfile(ws .. "/.forge.toml", "b"), "\n")),
      "Neovim's trust store does not list .forge.toml's content: " .. tostring(listed))
    assert(vim.fn.bufnr(ws .. "/.forge.toml") ~= -1, "the .forge.toml buffer the user edited is gone")
  end
  local real_uis = vim.api.nvim_list_uis
  vim.api.nvim_list_uis = function()
    return { {} }
  end
  local asked = {}
  local real_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item(item))
    end
    table.insert(asked, { prompt = opts.prompt, titles = titles })
    local deny = items[2]
    if vim.fn.has("nvim-0.10") == 1 then
      vim.defer_fn(function()
        on_choice(deny, 2)
      end, 50)
    else
      on_choice(deny, 2)
    end
  end
  script({ shell("echo deploy now"), { text = "ok, not deploying" } })
  result = t.answer(60000, "no confirm result", function(done)
    forge.run("deploy", nil, done)
  end)
  vim.ui.select = real_select
  vim.api.nvim_list_uis = real_uis
  assert(#asked == 1, "asked: " .. vim.inspect(asked))
  assert(asked[1].prompt:find("echo deploy now", 1, true), asked[1].prompt)
  assert(table.concat(asked[1].titles, "|") == "Allow|Deny|Allow for this conversation", vim.inspect(asked[1].titles))
  local answered = last_question()
  assert(answered:find("echo deploy now", 1, true) and vim.endswith(answered, " → Deny"), answered)
  assert(result.failures == 1, "the denied command did not fail: " .. vim.inspect(result))
  local denied = false
  for _, e in ipairs(events) do
    if e.type == "toolCallFinished" and e.output and e.output:find("the user denied", 1, true) then
      denied = true
    end
  end
  assert(denied, "no denial in the events")

  -- 4b. Continue through an asynchronous picker (telescope-like): on 0.10+ the request waits for it;
  -- on older Neovim the server has had its answer already, so the plugin starts the Continue turn.
  vim.api.nvim_list_uis = function()
    return { {} }
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { prompt = opts.prompt })
    vim.defer_fn(function()
      on_choice(items[1], 1)
    end, 50)
  end
  script({ shell("exit 1"), shell("exit 1"), shell("exit 1"), { text = "recovered" } })
  before = finished_turns()
  local completed = count_notes("turn completed")
  vim.cmd("ForgeRun break things")
  wait(60000, "no Continue turn through the picker", function()
    return finished_turns() == before + 2 and count_notes("turn completed") == completed + 1
  end)
  vim.ui.select = real_select
  vim.api.nvim_list_uis = real_uis
  assert(asked[#asked].prompt:find("Maximum tool failure limit (3)", 1, true), asked[#asked].prompt)
  answered = last_question()
  assert(answered:find("Maximum tool failure limit (3)", 1, true) and vim.endswith(answered, " → Continue"), answered)

  -- 5. commands from the log window find the running server (no second server)
  script({ shell("sleep 30"), { text = "never" } })
  vim.cmd("ForgeRun slow")
  wait(30000, "slow turn did not start", function()
    return status_is("running shell")
  end)
  vim.cmd("ForgeLog")
  assert(vim.api.nvim_get_current_buf() == vim.fn.bufnr("forge://log"), "not in the log window")
  local t0 = uv.hrtime()
  vim.cmd("ForgeCancel")
  wait(10000, "cancel not told", function()
    return count_notes("Forge: turn cancelled") == 1
  end)
  assert((uv.hrtime() - t0) / 1e9 < 5, "cancel was slow")
  assert(count_notes("no turn is running") == 0, "cancel from the log window missed the turn")
  assert(forge_clients() == 1, "a second server started")
  local status = t.answer(10000, "no status from the log window", forge.status)
  assert(status.running == false, vim.inspect(status))

  -- 5b. the statusline gives the last turn's tokens; :ForgeConversations picks one through vim.ui.select
  assert(forge.statusline():find("%d+%.?%d*k? tokens cost unknown"), forge.statusline())
  local picked_from, listed, opened
  local real_select2 = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    listed = items
    picked_from = vim.tbl_map(opts.format_item, items)
    on_choice(items[#items])
  end
  opened = t.answer(10000, "no conversation opened", forge.conversations)
  vim.ui.select = real_select2
  assert(#picked_from >= 1 and picked_from[1]:find(" turns · ", 1, true), vim.inspect(picked_from))
  assert(opened.conversationId == listed[#listed].id, vim.inspect(opened))

  -- 6. :ForgeConfig reuses one scratch buffer; q closes it
  -- (the user command first; then the function, whose callback says when the answer is shown)
  vim.cmd("ForgeConfig")
  wait(10000, "no config", function()
    return vim.api.nvim_buf_get_name(0) == "forge://config"
  end)
  local cbuf = vim.api.nvim_get_current_buf()
  assert(vim.bo[cbuf].filetype == "forgeconfig", vim.bo[cbuf].filetype)
  t.answer(10000, "no config", forge.show_config)
  assert(vim.api.nvim_get_current_buf() == cbuf, "a second config buffer")
  local wins = #vim.api.nvim_list_wins()
  vim.cmd("normal q")
  assert(#vim.api.nvim_list_wins() == wins - 1, "q did not close the config window")

  -- 8. :checkhealth forge: server and version, Neovim, the workspace and its .forge.toml problems
  local f2 = assert(io.open(ws .. "/.forge.toml", "a"))
  f2:write("timeout_secs = \"lots\"\n")
  f2:close()
  vim.cmd("edit " .. ws .. "/.forge.toml")
  vim.cmd("write")
  local tomlbuf = vim.api.nvim_get_current_buf()
  wait(10000, "no config diagnostic", function()
    return #vim.diagnostic.get(tomlbuf) > 0
  end)
  vim.cmd("checkhealth forge")
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  out("HEALTH\n" .. report)
  assert(report:find("forge-lsp 0.1", 1, true), report)
  assert(report:find("Neovim " .. vim.version().major .. "." .. vim.version().minor, 1, true), report)
  assert(report:find("workspace " .. ws, 1, true), report)
  assert(report:find(".forge.toml:6: tools.shell.timeout_secs", 1, true), report)
  -- the file changed since it was trusted: the report says so (a server without trust: it says that)
  if os.getenv("FORGE_HAS_TRUST") == "1" then
    assert(report:find("the workspace's files changed since you trusted it", 1, true), report)
    -- Never a step that trusts more than the user read (issue 34): review first; Neovim's own store is no advice.
    assert(report:find("see what changed (git diff, git log -p); review its .forge.toml", 1, true), report)
    assert(not report:find("adds it", 1, true) and not report:find("does not list", 1, true), report)
  else
    assert(report:find("this server does not report trust", 1, true), report)
  end
  vim.cmd("bwipeout")

  -- nothing warned of an unknown key (default settings = {} sent as an object)
  assert(count_notes("unknown") == 0, "unknown key warned")
  assert(forge_clients() == 1, "a second server started")
  assert(#deprecated == 0, "deprecated API used: " .. vim.inspect(deprecated))
  out("summary: ok")
  vim.lsp.stop_client(client.id)
end)

if ok then
  finish(0, "PASS " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor))
else
  finish(1, "FAIL " .. tostring(err))
end
