-- Headless Neovim as a real LSP client: :ForgeRun against the real server on the scripted model.
-- Env: FORGE_PYTHON, FORGE_WORKSPACE, FORGE_PLUGIN. Prints PASS/FAIL lines; exits 0 on success.
local ws = os.getenv("FORGE_WORKSPACE")
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))

local function out(line)
  io.stdout:write(line .. "\n")
end

local function finish(code, msg)
  out(msg)
  vim.schedule(function()
    os.exit(code)
  end)
end

local deadline = vim.loop.new_timer()
deadline:start(100000, 0, vim.schedule_wrap(function()
  out("FAIL timeout")
  os.exit(3)
end))

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local forge = require("forge")
forge.setup({ cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" }, settings = { maxRequestsPerTurn = 40 } })

local ok, err = pcall(function()
  vim.cmd("edit " .. ws .. "/main.py")
  local client = forge.client()
  assert(client, "no client")
  assert(vim.wait(30000, function()
    return client.initialized
  end, 50), "server did not initialize")

  -- the statusline helper before anything runs
  assert(forge.statusline():find("Forge: idle"), forge.statusline())

  vim.cmd("2,3ForgeRun break things")
  assert(vim.wait(60000, function()
    return forge.state.last_result ~= nil
  end, 50), "no forge.run result")
  local result = forge.state.last_result
  assert(result.status == "interrupted", "status " .. tostring(result.status))
  assert(result.reason.kind == "MaxToolFailurePerTurnLimitReached", vim.inspect(result.reason))
  assert(result.reason.limit == 3 and result.reason.errors.shell == 3, vim.inspect(result.reason))

  -- retry diagnostics on the transcript, through vim.diagnostic
  local transcript = ws .. "/.forge/transcripts/" .. result.turnId .. ".md"
  local bufnr = vim.uri_to_bufnr(vim.uri_from_fname(transcript))
  assert(vim.wait(5000, function()
    return #vim.diagnostic.get(bufnr) >= 4
  end, 50), "diagnostics: " .. vim.inspect(vim.diagnostic.get(bufnr)))
  local warns, errors = {}, {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    assert(d.source == "forge", "source " .. tostring(d.source))
    if d.severity == vim.diagnostic.severity.WARN then
      assert(code == "tool-retry", "code " .. tostring(code))
      table.insert(warns, d.message)
    elseif d.severity == vim.diagnostic.severity.ERROR then
      assert(code == "max-tool-failure-per-turn", "code " .. tostring(code))
      table.insert(errors, d.message)
    end
  end
  table.sort(warns)
  assert(#warns == 3 and #errors == 1, vim.inspect({ warns, errors }))
  assert(warns[1]:find("attempts remaining: 0 of 3", 1, true), warns[1])
  assert(warns[3]:find("attempts remaining: 2 of 3", 1, true), warns[3])

  -- the interrupt reached the user as a notification
  local interrupted = false
  for _, n in ipairs(notes) do
    if n.msg:find("Maximum tool failure limit (3)", 1, true) and n.level >= vim.log.levels.WARN then
      interrupted = true
    end
  end
  assert(interrupted, "notifications: " .. vim.inspect(notes))
  assert(forge.statusline():find("interrupted"), forge.statusline())

  -- the range went to the server with the prompt
  local started = forge.state.events[1]
  assert(started.type == "turnStarted" and started.prompt:find("selected lines 2%-3 of main.py"), started.prompt)

  -- the log buffer holds the events
  local log = table.concat(vim.api.nvim_buf_get_lines(forge.state.log_buf, 0, -1, false), "\n")
  assert(log:find("↻ shell failed: 2 of 3 attempts left", 1, true), log)

  -- :ForgeStatus and :ForgeConfig answer
  vim.cmd("ForgeStatus")
  assert(vim.wait(10000, function()
    return forge.state.last_status ~= nil
  end, 50), "no status")
  assert(forge.state.last_status.errors.shell == 3, vim.inspect(forge.state.last_status))
  vim.cmd("ForgeConfig")
  assert(vim.wait(10000, function()
    return forge.state.last_config ~= nil
  end, 50), "no config")
  assert(forge.state.last_config.max_requests_per_turn.source == "editor", vim.inspect(forge.state.last_config.max_requests_per_turn))
  out(string.format("summary: %s requests=%d toolCalls=%d failures=%d", result.status, result.requests, result.toolCalls, result.failures))
  if vim.lsp.stop_client then
    vim.lsp.stop_client(client.id)
  end
end)

if ok then
  finish(0, "PASS " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor))
else
  finish(1, "FAIL " .. tostring(err))
end
