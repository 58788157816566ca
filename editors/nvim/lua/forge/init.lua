-- forge.nvim: a thin Neovim client of forge-lsp. All agent logic stays in the server.
-- Works on Neovim 0.7 (vim.lsp.start_client) and 0.8+ (vim.lsp.start).
local M = {}

---@class ForgeConfig
---@field cmd string[] command that starts the server
---@field settings table editor settings, sent as initializationOptions and workspace/configuration "forge"
---@field root_markers string[] files that mark the workspace root
---@field notify boolean show retries, interrupts and results with vim.notify
---@field auto_continue boolean answer "Continue" after an interrupt without asking
M.config = {
  cmd = { "forge-lsp" },
  settings = {},
  root_markers = { ".forge.toml", ".git" },
  notify = true,
  auto_continue = false,
}

M.state = { status = "idle", turn_id = nil, last_result = nil, events = {}, log_buf = nil }

local has_011 = vim.fn.has("nvim-0.11") == 1

local function notify(msg, level)
  if M.config.notify then
    vim.notify(msg, level or vim.log.levels.INFO, { title = "Forge" })
  end
end

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The workspace root of a file: the nearest folder above it with a root marker.
function M.find_root(path)
  local dir = vim.fn.fnamemodify(path ~= "" and path or vim.fn.getcwd(), ":p:h")
  while dir and dir ~= "" do
    for _, marker in ipairs(M.config.root_markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

-- Log buffer -----------------------------------------------------------------

local function log_buffer()
  local buf = M.state.log_buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "forge://log")
  vim.api.nvim_buf_set_option(buf, "filetype", "forgelog")
  M.state.log_buf = buf
  return buf
end

function M.log(lines)
  if type(lines) == "string" then
    lines = vim.split(lines, "\n", { plain = true })
  end
  local buf = log_buffer()
  local count = vim.api.nvim_buf_line_count(buf)
  local first = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  if count == 1 and first == "" then
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, lines)
  else
    vim.api.nvim_buf_set_lines(buf, count, count, false, lines)
  end
end

function M.open_log()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, log_buffer())
end

-- Events ---------------------------------------------------------------------

local function format_event(e)
  local t = e.type
  if t == "turnStarted" then
    return string.format("▶ turn %s started (model %s): %s", e.turnId, e.model or "?", e.prompt or "")
  elseif t == "toolCallStarted" then
    return "  → " .. (e.title ~= "" and e.title or e.tool)
  elseif t == "toolCallFinished" then
    return string.format("  %s %s", e.ok and "✓" or "✗", e.tool)
  elseif t == "retry" then
    return string.format("  ↻ %s failed: %d of %d attempts left", e.tool, e.attemptsLeft, e.limit)
  elseif t == "llmRetry" then
    return string.format("  ⟳ model request retry %d in %d ms: %s", e.attempt, e.delayMs, e.cause)
  elseif t == "interrupt" then
    return "  ⛔ " .. (e.message or e.reason.kind)
  elseif t == "turnFinished" then
    return "■ turn " .. tostring(e.status)
  end
  return nil
end

function M.on_event(_, event)
  if type(event) ~= "table" then
    return
  end
  table.insert(M.state.events, event)
  local line = format_event(event)
  if line then
    M.log(line)
  end
  local t = event.type
  if t == "turnStarted" then
    M.state.status = "running"
    M.state.turn_id = event.turnId
  elseif t == "toolCallStarted" then
    M.state.status = "running " .. event.tool
  elseif t == "retry" then
    M.state.status = string.format("retry %d left (%s)", event.attemptsLeft, event.tool)
    notify(string.format("%s failed; %d attempt(s) left", event.tool, event.attemptsLeft), vim.log.levels.WARN)
  elseif t == "interrupt" then
    M.state.status = "interrupted"
    notify("interrupted: " .. (event.message or event.reason.kind), vim.log.levels.ERROR)
  elseif t == "turnFinished" then
    if event.status ~= "interrupted" then
      M.state.status = "idle"
    end
    M.state.turn_id = nil
  end
  vim.cmd("redrawstatus")
end

--- For 'statusline': %{v:lua.require'forge'.statusline()}
function M.statusline()
  local s = "Forge: " .. M.state.status
  if M.state.progress then
    s = s .. " · " .. M.state.progress
  end
  return s
end

-- Server -> client handlers ---------------------------------------------------

local function on_progress(err, result, ctx, config)
  local value = result and result.value or {}
  if value.kind == "end" then
    M.state.progress = nil
  elseif value.message then
    M.state.progress = value.message
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

local function on_message_request(_, result)
  local actions = result and result.actions or {}
  if #actions == 0 then
    return vim.NIL
  end
  if M.config.auto_continue then
    for _, action in ipairs(actions) do
      if action.title == "Continue" then
        return action
      end
    end
  end
  if #vim.api.nvim_list_uis() == 0 then
    return vim.NIL -- headless: nobody to ask
  end
  local items = { result.message }
  for i, action in ipairs(actions) do
    table.insert(items, string.format("%d. %s", i, action.title))
  end
  local choice = vim.fn.inputlist(items)
  return actions[choice] or vim.NIL
end

local function on_show_message(_, result)
  local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  vim.notify(result.message, levels[result.type] or vim.log.levels.INFO, { title = "Forge" })
  return vim.NIL
end

local function client_config(root)
  return {
    name = "forge",
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = { settings = M.config.settings },
    settings = { forge = M.config.settings },
    handlers = {
      ["forge/event"] = M.on_event,
      ["$/progress"] = on_progress,
      ["window/showMessageRequest"] = on_message_request,
      ["window/showMessage"] = on_show_message,
    },
  }
end

--- The forge client for a buffer (started and attached on demand).
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.find_root(vim.api.nvim_buf_get_name(bufnr))
  if not root then
    return nil
  end
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  M.clients = M.clients or {}
  local id = M.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    M.clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local id = M.attach(bufnr)
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    notify("no forge-lsp for this buffer (no .forge.toml or .git above it)", vim.log.levels.ERROR)
  end
  return client
end

local function command(name, arg, on_result, bufnr)
  local client = M.client(bufnr)
  if not client then
    return
  end
  request(client, "workspace/executeCommand", { command = name, arguments = { arg or vim.empty_dict() } }, function(err, result)
    if err then
      notify(name .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr or vim.api.nvim_get_current_buf())
end

-- Commands -------------------------------------------------------------------

function M.run(prompt, opts)
  opts = opts or {}
  if not prompt or prompt == "" then
    notify("usage: :ForgeRun {prompt}", vim.log.levels.ERROR)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local arg = { prompt = prompt }
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= "" then
    arg.uri = vim.uri_from_bufnr(bufnr)
  end
  if opts.range and opts.range > 0 then
    local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ""
    arg.range = {
      start = { line = opts.line1 - 1, character = 0 },
      ["end"] = { line = opts.line2 - 1, character = #last },
    }
  end
  M.state.last_result = nil
  command("forge.run", arg, function(result)
    M.state.last_result = result
    local msg = string.format(
      "turn %s: %d requests, %d tool calls, %d failures",
      result.status, result.requests, result.toolCalls, result.failures
    )
    M.log({ msg, result.text or "" })
    local level = result.status == "completed" and vim.log.levels.INFO or vim.log.levels.WARN
    notify(msg, level)
  end, bufnr)
end

function M.cancel()
  command("forge.cancel", nil, function(result)
    notify(result.cancelled and "turn cancelled" or "no turn is running")
  end)
end

function M.status()
  command("forge.status", nil, function(result)
    M.state.last_status = result
    notify(string.format("%s · model %s · limit %d", result.running and "running" or "idle", result.model, result.limit))
  end)
end

function M.new_conversation()
  command("forge.newConversation", nil, function(result)
    notify("new conversation " .. result.conversationId)
  end)
end

function M.show_config()
  command("forge.showConfig", nil, function(result)
    local keys = vim.tbl_keys(result)
    table.sort(keys)
    local lines = {}
    for _, key in ipairs(keys) do
      table.insert(lines, string.format("%-28s = %-24s (%s)", key, vim.inspect(result[key].value), result[key].source))
    end
    M.state.last_config = result
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
  end)
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("forge", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      if vim.bo[args.buf].buftype == "" then
        M.attach(args.buf)
      end
    end,
  })
  vim.api.nvim_create_user_command("ForgeRun", function(o)
    M.run(o.args, { range = o.range, line1 = o.line1, line2 = o.line2 })
  end, { nargs = "+", range = true, desc = "Run the Forge agent with a prompt (on the selection, if any)" })
  vim.api.nvim_create_user_command("ForgeCancel", M.cancel, { desc = "Cancel the running Forge turn" })
  vim.api.nvim_create_user_command("ForgeStatus", M.status, { desc = "Show Forge status" })
  vim.api.nvim_create_user_command("ForgeConfig", M.show_config, { desc = "Show Forge's effective config and sources" })
  vim.api.nvim_create_user_command("ForgeNew", M.new_conversation, { desc = "Start a new Forge conversation" })
  vim.api.nvim_create_user_command("ForgeLog", M.open_log, { desc = "Open the Forge event log" })
end

return M
