-- The :Forge* commands and the Lua functions behind them: each sends one server command and shows
-- its answer. A function's last argument, on_result, is an optional callback that gets the answer
-- after it was shown (not called on an error: that is told to the user).
local clients = require("forge.client")
local events = require("forge.events")
local log = require("forge.log")
local mcp = require("forge.mcp")
local notify_mod = require("forge.notify")
local roots = require("forge.roots")
local scratch = require("forge.scratch")
local trust = require("forge.trust")

local M = {}

local notify, one_line = notify_mod.notify, notify_mod.one_line
local levels = vim.log.levels
local command = clients.execute

--- Hand the server's answer on to the caller's callback (the Lua API's last argument), if any.
local function answer(on_result, result)
  if on_result then
    on_result(result)
  end
end

--- A conversation id as people quote it (git-style: its first 8 characters).
local function short_id(id)
  return tostring(id or ""):sub(1, 8)
end

--- A setting's value as .forge.toml would write it; "(not set)" for none.
local function config_value(value)
  if value == nil or value == vim.NIL then
    return "(not set)"
  elseif type(value) == "string" then
    return '"' .. value .. '"'
  elseif type(value) == "table" then
    if (vim.islist or vim.tbl_islist)(value) then
      return "[" .. table.concat(vim.tbl_map(config_value, value), ", ") .. "]"
    end
    return one_line(vim.inspect(value))
  end
  return tostring(value)
end

--- An ISO 8601 UTC time ("2026-12-05T23:02:44Z") as people read it: "just now", "3 min ago",
--- "5 h ago", else the local date and time.
local function when(iso)
  local y, mo, d, h, mi, sec = tostring(iso):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return tostring(iso or "")
  end
  local now = os.time()
  -- os.time reads a table as local time: shift by the local offset from UTC.
  local offset = os.time(os.date("*t", now)) - os.time(os.date("!*t", now))
  local stamp = os.time({ year = y, month = mo, day = d, hour = h, min = mi, sec = sec, isdst = false }) + offset
  local age = now - stamp
  if age < 60 then
    return "just now"
  elseif age < 3600 then
    return string.format("%d min ago", math.floor(age / 60))
  elseif age < 86400 then
    return string.format("%d h ago", math.floor(age / 3600))
  end
  return os.date("%Y-%m-%d %H:%M", stamp)
end

--- Start a turn; on_result(answer of forge.run) when it ends.
function M.run(prompt, opts, on_result)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  if not prompt or vim.trim(prompt) == "" then
    -- No prompt given (:ForgeRun alone, <Plug>(forge-run)): ask for one; nothing runs on <Esc>.
    vim.ui.input({ prompt = "Forge prompt: " }, function(input)
      if input and vim.trim(input) ~= "" and vim.api.nvim_buf_is_valid(bufnr) then
        M.run(input, vim.tbl_extend("force", opts, { bufnr = bufnr }), on_result)
      end
    end)
    return
  end
  local client = clients.for_command(bufnr)
  if not client then
    return
  end
  local arg = { prompt = prompt }
  local file = roots.buffer_file(bufnr)
  if file and roots.inside(file, client.config.root_dir) then
    arg.uri = vim.uri_from_bufnr(bufnr)
    if opts.range and opts.range > 0 then
      local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ""
      arg.range = {
        start = { line = opts.line1 - 1, character = 0 },
        ["end"] = { line = opts.line2 - 1, character = #last },
      }
    end
  end
  -- The result is told by the turnFinished event (so a Continue turn's is too).
  command("forge.run", arg, function(result)
    answer(on_result, result)
  end, bufnr)
end

--- Start a turn with forge.run's whole argument {prompt, uri?, range?} (a code action's command).
function M.run_arg(arg, bufnr, on_result)
  if type(arg) ~= "table" or type(arg.prompt) ~= "string" then
    notify("Forge: this action carries no prompt; list the code actions again", levels.WARN)
    return
  end
  command("forge.run", arg, function(result)
    answer(on_result, result)
  end, bufnr)
end

function M.cancel(on_result)
  events.note_cancel()
  local client = command("forge.cancel", nil, function(result)
    events.cancel_answered(result) -- the server answers once the turn has ended, saying what it stopped
    answer(on_result, result)
  end)
  if not client then
    events.note_cancel(false) -- no server: nothing was sent (for_command said why)
  end
end

--- :ForgeContinue: a new turn that goes on from the last interrupted one (what Continue answers).
function M.continue(on_result)
  if not events.interrupted() then
    notify("Forge: no interrupted turn to continue")
    return
  end
  M.run("Continue.", nil, on_result)
end

function M.status(on_result)
  command("forge.status", nil, function(result)
    local state = result.running and "running" or "idle"
    if not result.running and events.interrupted() then
      state = "interrupted (:ForgeContinue)"
    end
    events.set_agent(result.agent)
    -- An MCP server that failed is said here too (its tools are absent from every turn): :ForgeMcp has why.
    local failed = {}
    for _, server in ipairs(type(result.mcp) == "table" and result.mcp or {}) do
      if type(server) == "table" and server.state == "failed" then
        table.insert(failed, tostring(server.name))
      end
    end
    -- No model: "none", and why when the workspace is not trusted (its model may be the one ignored).
    local model = (result.model ~= nil and result.model ~= vim.NIL) and tostring(result.model)
      or (result.trusted == false and "none (workspace not trusted: :ForgeTrust)" or "none")
    -- The check of the agent's edits against your language servers, where it is not the default (:help forge-verify).
    local verify = type(result.verify) == "table" and result.verify.diagnostics
    notify(string.format(
      "Forge: %s · model %s · limit %s%s%s%s",
      state,
      model,
      tostring(result.limit),
      (result.agent and result.agent ~= "forge") and (" · agent " .. tostring(result.agent)) or "",
      (type(verify) == "string" and verify ~= "report") and (" · diagnostics " .. verify) or "",
      #failed > 0 and (" · MCP failed: " .. table.concat(failed, ", ") .. " (:ForgeMcp)") or ""
    ))
    answer(on_result, result)
  end)
end

function M.new_conversation(on_result)
  command("forge.newConversation", nil, function(result)
    events.set_agent("forge") -- a new conversation starts with forge
    notify("Forge: new conversation " .. short_id(result.conversationId))
    answer(on_result, result)
  end)
end

--- :ForgeConversations: pick a stored conversation (vim.ui.select); the next turn continues it.
--- on_open(answer of forge.openConversation) once the picked one is open.
function M.conversations(on_open)
  command("forge.listConversations", nil, function(list)
    if type(list) ~= "table" or #list == 0 then
      notify("Forge: no conversations in this workspace yet")
      return
    end
    vim.ui.select(list, {
      prompt = "Forge conversation (the next turn continues it)",
      format_item = function(c)
        local title = (c.title ~= nil and c.title ~= "") and c.title or "(no turn yet)"
        return string.format("%s · %s · %s · %s", title, events.count(c.turns, "turn"), events.tokens_text(c.tokens), when(c.updated))
      end,
    }, function(choice)
      if not choice then
        return
      end
      command("forge.openConversation", { id = choice.id }, function(result)
        events.forget_usage()
        command("forge.status", nil, function(status)
          events.set_agent(status.agent) -- the conversation's own agent
        end)
        notify("Forge: conversation " .. (result.title ~= "" and result.title or result.conversationId) .. " is open")
        answer(on_open, result)
      end)
    end)
  end)
end

--- :ForgeUndoTurn [turnId]: put back the files the last turn that changed files (or turnId) created,
--- changed or removed (forge.undoTurn); open buffers are restored as the agent's edits are (save them).
--- The server refuses, restoring nothing, where a file changed since the turn: that error is told.
function M.undo_turn(turn_id, on_result)
  local arg = nil
  if type(turn_id) == "string" and vim.trim(turn_id) ~= "" then
    arg = { turnId = vim.trim(turn_id) }
  end
  command("forge.undoTurn", arg, function(result)
    local done = {}
    for _, file in ipairs(type(result) == "table" and result.files or {}) do
      table.insert(done, tostring(file.action) .. " " .. tostring(file.path))
    end
    local what = #done > 0 and table.concat(done, ", ") or "every file was already as before it"
    require("forge.reply").close() -- the reply of the turn undone, over the lines it no longer holds
    notify(one_line("Forge: undid turn " .. tostring(result.turnId) .. ": " .. what))
    answer(on_result, result)
  end)
end

function M.show_config(on_result)
  command("forge.showConfig", nil, function(result)
    local keys = vim.tbl_keys(result)
    table.sort(keys)
    -- Columns: key, source, value, the first two as wide as their longest entry; the value last,
    -- so that a long one (a list) runs on without pushing another column out of line.
    local key_width, source_width = 0, 0
    for _, key in ipairs(keys) do
      key_width = math.max(key_width, vim.fn.strdisplaywidth(key))
      source_width = math.max(source_width, vim.fn.strdisplaywidth(tostring(result[key].source)))
    end
    local lines = {}
    for _, key in ipairs(keys) do
      local source = tostring(result[key].source)
      table.insert(lines, key .. string.rep(" ", key_width - vim.fn.strdisplaywidth(key) + 2)
        .. source .. string.rep(" ", source_width - vim.fn.strdisplaywidth(source) + 2)
        .. config_value(result[key].value))
    end
    local buf = scratch.buffer("forge://config", "forgeconfig")
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    scratch.show(buf)
    answer(on_result, result)
  end)
end

--- :ForgeTrust: the server records the workspace as trusted (forge.trust) and reloads its config.
function M.trust(on_result)
  local client = command("forge.trust", nil, function(result, client)
    local root = client.config.root_dir
    if type(result) == "table" and result.trusted then
      notify("Forge: trusted " .. root)
      require("forge.agents").forget(client)
      require("forge.slash").forget(client)
    else
      notify("Forge: " .. root .. " is not trusted: " .. vim.inspect(result), levels.WARN)
    end
    answer(on_result, result)
  end)
  trust.remember(client and client.config.root_dir)
end

--- fn called with no argument: a user command would hand it its opts table, where the Lua API takes
--- a callback.
local function no_args(fn)
  return function()
    fn()
  end
end

--- A user command's range as forge.run's opts take it.
local function range_of(o)
  return { range = o.range, line1 = o.line1, line2 = o.line2 }
end

--- The :Forge commands, one row each, from which come the user commands (M.create), the <Plug> mappings
--- (M.create_plugs) and the Lua API (init.lua: `api` is the name require("forge") gives `fn`). A row:
--- `name`, the user command; `command`, its body (the user command's opts in); `opts`, its
--- nvim_create_user_command options; `plugs`, its <Plug>(forge-NAME) mappings ({mode, name, rhs, desc});
--- `api` and `fn`, the Lua function that does what it does; `sends`, the server commands it sends
--- (tests/nvim/test_nvim_command_table.py checks they are the server's, and that doc/forge.txt tells every
--- command, mapping and function). Adding a command is a row here, and its help in doc/forge.txt.
function M.table()
  local actions = require("forge.actions")
  local agents = require("forge.agents")
  local slash = require("forge.slash")
  return {
    {
      name = "ForgeRun",
      command = function(o)
        M.run(o.args, range_of(o))
      end,
      opts = { nargs = "*", range = true, desc = "Run the Forge agent with a prompt (on the selection, if any)" },
      plugs = {
        { "n", "run", "<Cmd>ForgeRun<CR>", "Forge: run a prompt (asked for)" },
        -- From Visual mode ":" gives the selection as the range.
        { "x", "run", ":ForgeRun<CR>", "Forge: run a prompt on the selection" },
      },
      api = "run",
      fn = M.run,
      sends = { "forge.run" },
    },
    {
      name = "ForgeFix",
      command = function(o)
        actions.code_action(range_of(o))
      end,
      opts = { range = true, desc = "Code actions here with every source's diagnostics: Forge: Fix, Explain, Edit selection" },
      plugs = {
        { "n", "fix", "<Cmd>ForgeFix<CR>", "Forge: code actions on this line (every diagnostic)" },
        { "x", "fix", ":ForgeFix<CR>", "Forge: code actions on the selection (Explain, Edit selection)" },
      },
      api = "code_action",
      fn = actions.code_action,
      sends = { "forge.run" },
    },
    {
      name = "ForgeCommand",
      command = function(o)
        local name, args = o.args:match("^%s*(%S+)%s*(.-)%s*$")
        slash.run(name, args, range_of(o))
      end,
      opts = {
        nargs = "*",
        range = true,
        complete = slash.complete,
        desc = "Run a Forge command (/review, /test, /explain, your own): :ForgeCommand name args",
      },
      plugs = { { "n", "command", "<Cmd>ForgeCommand<CR>", "Forge: run a command (picked)" } },
      api = "command",
      fn = slash.run,
      sends = { "forge.listCommands", "forge.run" },
    },
    {
      name = "ForgeContinue",
      command = no_args(M.continue),
      opts = { desc = "Continue the last interrupted Forge turn" },
      plugs = { { "n", "continue", "<Cmd>ForgeContinue<CR>", "Forge: continue the interrupted turn" } },
      api = "continue",
      fn = M.continue,
      sends = { "forge.run" },
    },
    {
      name = "ForgeCancel",
      command = no_args(M.cancel),
      opts = { desc = "Cancel the running Forge turn" },
      plugs = { { "n", "cancel", "<Cmd>ForgeCancel<CR>", "Forge: cancel the running turn" } },
      api = "cancel",
      fn = M.cancel,
      sends = { "forge.cancel" },
    },
    {
      name = "ForgeStatus",
      command = no_args(M.status),
      opts = { desc = "Show Forge status" },
      plugs = { { "n", "status", "<Cmd>ForgeStatus<CR>", "Forge: status" } },
      api = "status",
      fn = M.status,
      sends = { "forge.status" },
    },
    {
      name = "ForgeConfig",
      command = no_args(M.show_config),
      opts = { desc = "Show Forge's effective config and sources" },
      plugs = { { "n", "config", "<Cmd>ForgeConfig<CR>", "Forge: show the config" } },
      api = "show_config",
      fn = M.show_config,
      sends = { "forge.showConfig" },
    },
    {
      name = "ForgeNew",
      command = no_args(M.new_conversation),
      opts = { desc = "Start a new Forge conversation" },
      plugs = { { "n", "new", "<Cmd>ForgeNew<CR>", "Forge: new conversation" } },
      api = "new_conversation",
      fn = M.new_conversation,
      sends = { "forge.newConversation" },
    },
    {
      name = "ForgeConversations",
      command = no_args(M.conversations),
      opts = { desc = "Pick a Forge conversation to continue" },
      plugs = { { "n", "conversations", "<Cmd>ForgeConversations<CR>", "Forge: pick a conversation" } },
      api = "conversations",
      fn = M.conversations,
      sends = { "forge.listConversations", "forge.openConversation" },
    },
    {
      name = "ForgeAgent",
      command = function(o)
        agents.select(o.args)
      end,
      opts = {
        nargs = "?",
        complete = function(arglead)
          return agents.complete(arglead)
        end,
        desc = "Choose the Forge agent of this conversation (forge, muse, sage, ...)",
      },
      plugs = { { "n", "agent", "<Cmd>ForgeAgent<CR>", "Forge: choose the agent" } },
      api = "set_agent",
      fn = agents.select,
      sends = { "forge.listAgents", "forge.setAgent" },
    },
    {
      name = "ForgeUndoTurn",
      command = function(o)
        M.undo_turn(o.args)
      end,
      opts = { nargs = "?", desc = "Undo the files the last Forge turn (or turn ID) changed" },
      plugs = { { "n", "undo-turn", "<Cmd>ForgeUndoTurn<CR>", "Forge: undo the last turn's file changes" } },
      api = "undo_turn",
      fn = M.undo_turn,
      sends = { "forge.undoTurn" },
    },
    {
      name = "ForgeLog",
      command = no_args(log.open),
      opts = { desc = "Open the Forge event log" },
      plugs = { { "n", "log", "<Cmd>ForgeLog<CR>", "Forge: open the log" } },
      api = "open_log",
      fn = log.open,
      sends = {},
    },
    {
      name = "ForgeTrust",
      command = no_args(M.trust),
      opts = { desc = "Trust this workspace's .forge.toml and .forge/ (forge.trust)" },
      plugs = { { "n", "trust", "<Cmd>ForgeTrust<CR>", "Forge: trust this workspace" } },
      api = "trust",
      fn = M.trust,
      sends = { "forge.trust" },
    },
    {
      name = "ForgeMcp",
      command = mcp.command,
      opts = { nargs = "*", complete = mcp.complete, desc = "List Forge's MCP servers (restart NAME restarts one)" },
      plugs = { { "n", "mcp", "<Cmd>ForgeMcp<CR>", "Forge: MCP servers" } },
      api = "mcp_servers",
      fn = mcp.show,
      sends = { "forge.mcpServers", "forge.restartMcpServer" },
    },
  }
end

--- The :Forge* commands (plugin/forge.lua defines them at startup; they need no setup()).
function M.create()
  for _, row in ipairs(M.table()) do
    vim.api.nvim_create_user_command(row.name, row.command, row.opts)
  end
  M.create_plugs()
  require("forge.actions").register()
end

--- <Plug>(forge-...) mappings, one per command, for keymaps of one's own (and which-key).
function M.create_plugs()
  for _, row in ipairs(M.table()) do
    for _, plug in ipairs(row.plugs) do
      local mode, name, rhs, desc = unpack(plug)
      vim.keymap.set(mode, "<Plug>(forge-" .. name .. ")", rhs, { silent = true, desc = desc })
    end
  end
end

return M
