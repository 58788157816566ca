-- forge.nvim: a thin Neovim client of forge-lsp. All agent logic stays in the server.
-- Works on Neovim 0.7 (vim.lsp.start_client) and 0.11 (vim.lsp.start / vim.lsp.config).
local M = {}

---@class ForgeConfig
---@field cmd string[] command that starts the server
---@field settings table editor settings, sent as initializationOptions and workspace/configuration "forge"
---@field root_markers string[] files that mark the workspace root, the most preferred first
---@field autostart_markers string[] opening a file below one of these starts the server (others wait for a :Forge command)
---@field notify boolean show results, retries and questions' outcomes with vim.notify
---@field auto_continue boolean answer "Continue" after an interrupt without asking
M.config = {
  cmd = { "forge-lsp" },
  settings = {},
  root_markers = { ".forge.toml", ".git" },
  autostart_markers = { ".forge.toml" },
  notify = true,
  auto_continue = false,
}

M.state = { status = "idle", turn_id = nil, last_result = nil, events = {}, log_buf = nil, client_id = nil }
-- Client ids by workspace root: one server per root, found again from any window.
M.clients = {}

local uv = vim.uv or vim.loop
local has_011 = vim.fn.has("nvim-0.11") == 1
local levels = vim.log.levels

--- One line for the message area: a second line (or a wrap) would bring up "Press ENTER".
local function one_line(msg)
  return (tostring(msg):gsub("%s*\n%s*", " · "))
end

local function notify(msg, level)
  if M.config.notify then
    vim.notify(one_line(msg), level or levels.INFO, { title = "Forge" })
  end
end
M._notify = notify

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- A table that must reach the server as a JSON object even when empty ({} encodes as []).
local function object(t)
  if type(t) ~= "table" or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- The nearest folder at or above path holding marker (nil if none).
local function find_marker(dir, marker)
  while dir and dir ~= "" do
    if uv.fs_stat(dir .. "/" .. marker) then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
  return nil
end

--- The workspace root of a path: markers are tried in order (.forge.toml first), each up to /.
function M.find_root(path, markers)
  local dir = vim.fn.fnamemodify(path ~= nil and path ~= "" and path or vim.fn.getcwd(), ":p")
  if vim.fn.isdirectory(dir) == 0 then
    dir = vim.fn.fnamemodify(dir, ":h")
  end
  dir = dir:gsub("/$", "")
  if dir == "" then
    dir = "/"
  end
  for _, marker in ipairs(markers or M.config.root_markers) do
    local root = find_marker(dir, marker)
    if root then
      return root
    end
  end
  return nil
end

--- The file a buffer shows, or nil for the log window, scratch buffers, help, terminals...
local function buffer_file(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return vim.fn.fnamemodify(name, ":p")
end

local function inside(path, root)
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

-- Log buffer -----------------------------------------------------------------

local function scratch(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf ~= -1 and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].filetype = filetype
  vim.bo[buf].bufhidden = "hide"
  vim.keymap.set("n", "q", function()
    -- The last window cannot be closed (E444): show the previous buffer there instead.
    if #vim.api.nvim_list_wins() > 1 then
      vim.cmd("close")
    else
      vim.cmd("bprevious")
    end
  end, { buffer = buf, nowait = true, desc = "Close this Forge window" })
  return buf
end

local function log_buffer()
  local buf = M.state.log_buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  M.state.log_buf = scratch("forge://log", "forgelog")
  return M.state.log_buf
end

--- Append lines (a string may hold newlines: buffer lines cannot) to the log buffer.
function M.log(lines)
  if type(lines) == "string" then
    lines = { lines }
  end
  local split = {}
  for _, line in ipairs(lines) do
    vim.list_extend(split, vim.split(tostring(line), "\n", { plain = true }))
  end
  local buf = log_buffer()
  local count = vim.api.nvim_buf_line_count(buf)
  local first = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  if count == 1 and first == "" then
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, split)
  else
    vim.api.nvim_buf_set_lines(buf, count, count, false, split)
  end
  -- A visible log window follows the end.
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
    end
  end
end

--- Show buf in a window at the bottom, reusing the one that shows it already.
local function show(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_set_current_win(win)
      return win
    end
  end
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  return vim.api.nvim_get_current_win()
end

function M.open_log()
  local buf = log_buffer()
  local win = show(buf)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
end

-- Events ---------------------------------------------------------------------

local function summary_line(s)
  return string.format("%d requests, %d tool calls, %d failures", s.requests or 0, s.toolCalls or 0, s.failures or 0)
end

local function format_event(e)
  local t = e.type
  if t == "turnStarted" then
    return string.format("▶ turn %s started (model %s): %s", e.turnId, e.model or "?", e.prompt or "")
  elseif t == "toolCallStarted" then
    return "  → " .. ((e.title and e.title ~= "") and e.title or e.tool)
  elseif t == "toolCallFinished" then
    return string.format("  %s %s", e.ok and "✓" or "✗", e.tool)
  elseif t == "retry" then
    return string.format("  ↻ %s failed: %d of %d attempts left", e.tool, e.attemptsLeft, e.limit)
  elseif t == "llmRetry" then
    return string.format("  ⟳ model request retry %d in %d ms: %s", e.attempt, e.delayMs, e.cause)
  elseif t == "interrupt" then
    return "  ⛔ " .. (e.message or e.reason.kind)
  elseif t == "turnFinished" then
    local line = "■ turn " .. tostring(e.status)
    if type(e.summary) == "table" then
      line = line .. ": " .. summary_line(e.summary)
    end
    return line
  end
  return nil
end

--- The end of a turn, told once: completed/cancelled here; an interrupt by its Continue question,
--- a failure by the server's error message.
local function announce_finished(e)
  local s = type(e.summary) == "table" and e.summary or {}
  if e.status == "completed" then
    notify("Forge: turn completed (" .. summary_line(s) .. ")")
  elseif e.status == "cancelled" then
    notify("Forge: turn cancelled")
  elseif e.status == "failed" and not s.error then
    notify("Forge: turn failed (" .. summary_line(s) .. ")", levels.ERROR)
  end
end

local function flush_text()
  local text = M.state.text
  M.state.text = nil
  if text and vim.trim(text) ~= "" then
    M.log("  assistant: " .. vim.trim(text))
  end
end

local function handle_event(event)
  table.insert(M.state.events, event)
  local t = event.type
  -- Streamed text is gathered and logged once per message.
  if t == "assistantText" then
    M.state.text = (M.state.text or "") .. tostring(event.text or "")
    return
  end
  flush_text()
  local line = format_event(event)
  if line then
    M.log(line)
  end
  if t == "turnStarted" then
    M.state.status = "running"
    M.state.turn_id = event.turnId
  elseif t == "toolCallStarted" then
    M.state.status = "running " .. event.tool
  elseif t == "retry" then
    M.state.status = string.format("retry %d left (%s)", event.attemptsLeft, event.tool)
    notify(string.format("Forge: %s failed; %d attempt(s) left", event.tool, event.attemptsLeft), levels.WARN)
  elseif t == "interrupt" then
    M.state.status = "interrupted"
  elseif t == "turnFinished" then
    if event.status ~= "interrupted" then
      M.state.status = "idle"
    end
    M.state.turn_id = nil
    M.state.last_finished = event
    if type(event.usage) == "table" then
      M.state.last_usage = event.usage
    end
    announce_finished(event)
  end
  vim.cmd("redrawstatus")
end

function M.on_event(_, event)
  if type(event) ~= "table" then
    return
  end
  -- A plugin bug must not throw "Error executing lua callback" at the user on every event.
  local ok, err = pcall(handle_event, event)
  if not ok then
    M.log("forge.nvim: could not show event " .. tostring(event.type) .. ": " .. tostring(err))
  end
end

--- A usage {promptTokens, completionTokens, cost} as "12.3k tokens $0.0321" ("cost unknown" when unpriced).
function M.usage_text(u)
  if type(u) ~= "table" then
    return ""
  end
  local n = (tonumber(u.promptTokens) or 0) + (tonumber(u.completionTokens) or 0)
  local tokens = n >= 1000 and string.format("%.1fk", n / 1000) or tostring(n)
  local cost = type(u.cost) == "number" and string.format("$%.4f", u.cost) or "cost unknown"
  return tokens .. " tokens " .. cost
end

--- For 'statusline': %{v:lua.require'forge'.statusline()}
function M.statusline()
  local s = "Forge: " .. M.state.status
  if M.state.progress then
    s = s .. " · " .. M.state.progress
  end
  if M.state.last_usage and not M.state.turn_id then
    s = s .. " · " .. M.usage_text(M.state.last_usage)
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
  vim.cmd("redrawstatus")
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

local message_levels = { levels.ERROR, levels.WARN, levels.INFO, levels.DEBUG }

--- Ask with vim.ui.select (picker plugins apply). on_answer(action or nil) is called exactly once.
--- Returns the answer when it came before select returned (the default UI is synchronous).
local function ask(message, actions, on_answer)
  local done, answer = false, nil
  vim.ui.select(actions, {
    prompt = one_line(message),
    kind = "forge",
    format_item = function(action)
      return one_line(action.title)
    end,
  }, function(choice)
    done, answer = true, choice
    on_answer(choice)
  end)
  return done, answer
end

--- window/showMessageRequest: the Continue offer after an interrupt, and Allow/Deny questions.
function M.on_message_request(_, params)
  local actions = params and params.actions or {}
  local message = params and params.message or ""
  if #actions == 0 then
    notify(message, message_levels[params and params.type] or levels.INFO)
    return vim.NIL
  end
  local is_continue = #actions == 1 and actions[1].title == "Continue"
  if is_continue and M.config.auto_continue then
    notify(message .. " (continuing)", levels.WARN)
    return actions[1]
  end
  if #vim.api.nvim_list_uis() == 0 then
    -- Headless: nobody to ask; the interrupt is still told once (without the question).
    notify((message:gsub("%s*Continue anyway%?$", "")), levels.WARN)
    return vim.NIL
  end
  M.state.question = message
  local function answered(choice)
    M.state.question = nil
    M.state.last_answer = choice and choice.title or false
    -- The prompt stays in the message area otherwise, and the next message would ask for ENTER.
    vim.cmd("redraw")
  end
  local co = coroutine.running()
  if co and coroutine.isyieldable and coroutine.isyieldable() then
    -- 0.10+: the request is handled in a coroutine, so an asynchronous picker can take its time.
    ask(message, actions, function(choice)
      vim.schedule(function()
        answered(choice)
        coroutine.resume(co, choice or vim.NIL)
      end)
    end)
    return coroutine.yield()
  end
  -- Older Neovim answers the request when this returns: fine for the default (synchronous) select.
  local sync = true
  local done, answer = ask(message, actions, function(choice)
    answered(choice)
    if not sync and choice then
      -- The server has had "no answer" already: do what the answer asks from here where we can.
      if is_continue then
        M.run("Continue.")
      elseif choice.title == "Trust" then
        M.trust()
      else
        notify("Forge: the answer came after the server stopped waiting; it was taken as no answer (Deny)", levels.WARN)
      end
    end
  end)
  sync = false
  if not done then
    return vim.NIL
  end
  return answer or vim.NIL
end

local function on_show_message(_, result)
  notify(result.message, message_levels[result.type] or levels.INFO)
  return vim.NIL
end

-- Clients ----------------------------------------------------------------------

--- What Neovim's own trust store (vim.secure.trust, 0.9+) says of root's .forge.toml: true or nil.
function M.neovim_trusts(root)
  if not (vim.secure and vim.fn.has("nvim-0.9") == 1) then
    return nil
  end
  local file = root .. "/.forge.toml"
  local fd = io.open(file, "rb")
  if not fd then
    return nil
  end
  local contents = fd:read("*a")
  fd:close()
  local trust = io.open(vim.fn.stdpath("state") .. "/trust", "r")
  if not trust then
    return nil
  end
  local hash = vim.fn.sha256(contents)
  local real = uv.fs_realpath(file) or file
  local found = nil
  for line in trust:lines() do
    local h, path = line:match("^(%S+) (.+)$")
    if path == real and h == hash then
      found = true
    end
  end
  trust:close()
  return found
end

--- The handlers every forge client needs (setup's and lsp/forge.lua's).
M.handlers = {
  ["forge/event"] = M.on_event,
  ["$/progress"] = on_progress,
  ["window/showMessageRequest"] = M.on_message_request,
  ["window/showMessage"] = on_show_message,
}

--- before_init: tell the server what Neovim's trust store says (a client fact, like VS Code's isTrusted).
function M.before_init(params, config)
  local options = type(params.initializationOptions) == "table" and params.initializationOptions or {}
  -- Config merging (vim.lsp.config, deepcopy) can turn {} back into a plain table, sent as [].
  options.settings = object(options.settings)
  if config.root_dir and M.neovim_trusts(config.root_dir) then
    options.workspaceTrusted = true
  end
  params.initializationOptions = options
end

local function client_config(root)
  local config
  if not M.did_setup and has_011 and vim.lsp.config and vim.lsp.config.forge then
    -- Configured the 0.11 way (vim.lsp.config("forge", ...)): a command starts what it describes.
    config = vim.deepcopy(vim.lsp.config.forge)
    config.name = "forge"
  else
    config = {
      name = "forge",
      cmd = M.config.cmd,
      init_options = { settings = object(M.config.settings) },
      settings = { forge = object(M.config.settings) },
      handlers = M.handlers,
      before_init = M.before_init,
    }
  end
  config.root_dir = root
  config.workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } }
  return config
end
M._client_config = client_config

local function alive(id)
  local client = id and vim.lsp.get_client_by_id(id)
  -- is_stopped is a method on 0.11 and a closure that ignores its argument on 0.7: both take (client).
  if client and not (client.is_stopped and client.is_stopped(client)) then
    return client
  end
  return nil
end

--- Every running forge client (started by this plugin or by vim.lsp.enable("forge")).
local function running()
  local found, seen = {}, {}
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get()) do
    if client.name == "forge" and alive(client.id) and client.config.root_dir then
      table.insert(found, client)
      seen[client.id] = true
    end
  end
  for _, id in pairs(M.clients) do
    local client = alive(id)
    if client and not seen[id] and client.config.root_dir then
      table.insert(found, client)
    end
  end
  return found
end

--- The running server for a root, started if needed (one per root).
function M.start(root)
  for _, client in ipairs(running()) do
    if client.config.root_dir == root then
      return client
    end
  end
  local id
  if has_011 then
    id = vim.lsp.start(client_config(root), { attach = false })
  else
    id = vim.lsp.start_client(client_config(root))
  end
  M.clients[root] = id
  return alive(id)
end

--- A running forge client for bufnr, without starting one: the one attached to it, the one whose
--- root holds its file, or (log window, scratch buffers) the last one used.
function M.get_client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local file = buffer_file(bufnr)
  local best, best_len = nil, -1
  local clients = running()
  for _, client in ipairs(clients) do
    local root = client.config.root_dir
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      return client
    end
    if file and inside(file, root) and #root > best_len then
      best, best_len = client, #root
    end
  end
  if best or file then
    return best
  end
  return alive(M.state.client_id) or clients[1]
end

local function attach_file(bufnr, client)
  local file = buffer_file(bufnr)
  if file and inside(file, client.config.root_dir) and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- On opening a file: attach it to the server whose workspace holds it, or start one where a
--- .forge.toml says so. A plain git repository starts nothing until a :Forge command.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local file = buffer_file(bufnr)
  if not file then
    return nil
  end
  local client = M.get_client(bufnr)
  if not client then
    local root = M.find_root(file, M.config.autostart_markers)
    if not root then
      return nil
    end
    client = M.start(root)
  end
  if client then
    attach_file(bufnr, client)
    return client.id
  end
  return nil
end

--- The client for a :Forge command from bufnr: the running one, or a new one (root: the
--- .forge.toml or .git above the file or the working directory, else the working directory).
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get_client(bufnr)
  if not client then
    local root = M.find_root(buffer_file(bufnr) or vim.fn.getcwd()) or vim.fn.getcwd()
    client = M.start(root)
    if not client then
      notify("Forge: could not start " .. table.concat(M.config.cmd, " "), levels.ERROR)
      return nil
    end
  end
  attach_file(bufnr, client)
  M.state.client_id = client.id
  return client
end

local function command(name, arg, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  request(client, "workspace/executeCommand", { command = name, arguments = { object(arg) } }, function(err, result)
    if err then
      M.state.last_error = { command = name, message = err.message }
      notify("Forge: " .. name .. ": " .. (err.message or vim.inspect(err)), levels.ERROR)
      return
    end
    if on_result then
      on_result(result, client)
    end
  end, bufnr)
  return client
end

-- Commands -------------------------------------------------------------------

function M.run(prompt, opts)
  opts = opts or {}
  if not prompt or prompt == "" then
    notify("usage: :ForgeRun {prompt}", levels.ERROR)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  local arg = { prompt = prompt }
  local file = buffer_file(bufnr)
  if file and inside(file, client.config.root_dir) then
    arg.uri = vim.uri_from_bufnr(bufnr)
    if opts.range and opts.range > 0 then
      local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ""
      arg.range = {
        start = { line = opts.line1 - 1, character = 0 },
        ["end"] = { line = opts.line2 - 1, character = #last },
      }
    end
  end
  M.state.last_result = nil
  -- The result is told by the turnFinished event (so a Continue turn's is too).
  command("forge.run", arg, function(result)
    M.state.last_result = result
  end, bufnr)
end

function M.cancel()
  command("forge.cancel", nil, function(result)
    if not result.cancelled then
      notify("Forge: no turn is running")
    end
    -- A cancelled turn is told by its turnFinished event.
  end)
end

function M.status()
  command("forge.status", nil, function(result)
    M.state.last_status = result
    notify(string.format(
      "Forge: %s · model %s · limit %s",
      result.running and "running" or "idle",
      tostring(result.model),
      tostring(result.limit)
    ))
  end)
end

function M.new_conversation()
  command("forge.newConversation", nil, function(result)
    notify("Forge: new conversation " .. result.conversationId)
  end)
end

--- :ForgeConversations: pick a stored conversation (vim.ui.select); the next turn continues it.
function M.conversations()
  command("forge.listConversations", nil, function(list)
    M.state.last_conversations = list
    if type(list) ~= "table" or #list == 0 then
      notify("Forge: no conversations in this workspace yet")
      return
    end
    vim.ui.select(list, {
      prompt = "Forge conversation (the next turn continues it)",
      format_item = function(c)
        local title = (c.title ~= nil and c.title ~= "") and c.title or "(no turn yet)"
        return string.format("%s · %d turns · %s tokens · %s", title, c.turns or 0, tostring(c.tokens or 0), tostring(c.updated))
      end,
    }, function(choice)
      if not choice then
        return
      end
      command("forge.openConversation", { id = choice.id }, function(result)
        M.state.last_open = result
        M.state.last_usage = nil
        notify("Forge: conversation " .. (result.title ~= "" and result.title or result.conversationId) .. " is open")
      end)
    end)
  end)
end

function M.show_config()
  command("forge.showConfig", nil, function(result)
    local keys = vim.tbl_keys(result)
    table.sort(keys)
    local lines = {}
    for _, key in ipairs(keys) do
      local value = one_line(vim.inspect(result[key].value))
      table.insert(lines, string.format("%-28s = %-24s (%s)", key, value, result[key].source))
    end
    M.state.last_config = result
    local buf = scratch("forge://config", "forgeconfig")
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    show(buf)
  end)
end

--- :ForgeTrust: the server records the workspace as trusted (forge.trust) and reloads its config.
function M.trust()
  local client = command("forge.trust", nil, function(result, client)
    M.state.last_trust = result
    local root = client.config.root_dir
    if type(result) == "table" and result.trusted then
      notify("Forge: trusted " .. root)
    else
      notify("Forge: " .. root .. " is not trusted: " .. vim.inspect(result), levels.WARN)
    end
  end)
  -- Neovim's own trust store learns it too (0.9+), so the next start says so at once.
  local root = client and client.config.root_dir
  if root and vim.secure and vim.secure.trust and uv.fs_stat(root .. "/.forge.toml") then
    pcall(vim.secure.trust, { action = "allow", path = root .. "/.forge.toml" })
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("forge", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  M.did_setup = true
  M.create_commands()
  -- A file opened before setup (e.g. `nvim file` with lazy loading) is attached now.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

--- The :Forge* commands (plugin/forge.lua defines them at startup; they need no setup()).
function M.create_commands()
  local create = vim.api.nvim_create_user_command
  create("ForgeRun", function(o)
    M.run(o.args, { range = o.range, line1 = o.line1, line2 = o.line2 })
  end, { nargs = "+", range = true, desc = "Run the Forge agent with a prompt (on the selection, if any)" })
  create("ForgeCancel", M.cancel, { desc = "Cancel the running Forge turn" })
  create("ForgeStatus", M.status, { desc = "Show Forge status" })
  create("ForgeConfig", M.show_config, { desc = "Show Forge's effective config and sources" })
  create("ForgeNew", M.new_conversation, { desc = "Start a new Forge conversation" })
  create("ForgeConversations", M.conversations, { desc = "Pick a Forge conversation to continue" })
  create("ForgeLog", M.open_log, { desc = "Open the Forge event log" })
  create("ForgeTrust", M.trust, { desc = "Trust this workspace's .forge.toml and .forge/ (forge.trust)" })
end

return M
