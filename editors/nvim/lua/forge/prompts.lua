-- The server's window/showMessage and window/showMessageRequest: messages, and questions (Continue
-- after an interrupt, or Stop; Allow/Deny; Trust) asked through vim.ui.select.
local config = require("forge.config")
local events = require("forge.events")
local log = require("forge.log")
local one_line = require("forge.notify").one_line
local notify = require("forge.notify").notify

local M = {}

local levels = vim.log.levels
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

--- The log keeps each question with its answer: once answered, the prompt leaves the message area.
local function record(message, answer)
  log.append("  ? " .. one_line(message) .. " → " .. answer)
end

local STOP = "Stop"
local CONTINUE_HINT = "Forge: turn left interrupted; :ForgeContinue continues it"
local TRUST_HINT = "Forge: workspace left untrusted; :ForgeTrust trusts it"

local uv = vim.uv or vim.loop

--- How long the user has typed nothing before the Trust question may be asked, in milliseconds.
M.idle_ms = 1500
local last_key = uv.now()
-- Every key the user types: the Trust question waits until they have typed nothing for idle_ms.
vim.on_key(function()
  last_key = uv.now()
end, vim.api.nvim_create_namespace("forge.trust_idle"))

--- The Trust question waiting for the user to be idle: { message, client_id }, the latest one only.
local pending = nil
local timer = nil

local function idle()
  local mode = vim.api.nvim_get_mode()
  return vim.v.vim_did_enter == 1
    and mode.mode == "n"
    and not mode.blocking
    and vim.fn.getcmdwintype() == ""
    and vim.fn.getchar(1) == 0
    and uv.now() - last_key >= M.idle_ms
end

local function stop_waiting()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

--- Whether vim.ui.select is Neovim's own (a numbered list read by inputlist()), not a picker plugin's.
local function builtin_select()
  local info = debug.getinfo(vim.ui.select, "S")
  return info ~= nil and type(info.source) == "string" and info.source:find("vim[/\\]ui%.lua$") ~= nil
end

--- The Trust question as Neovim's own list shows it, read as a line, so that nothing typed is lost: "1" trusts;
--- "2", "q" or nothing is Not now; a command typed there (":ForgeTrust", ":w" out of habit) is the command's and
--- runs as typed (so a typed :ForgeTrust always trusts); anything else is a stray key: no answer.
local function ask_line(message, on_answer)
  local prompt = one_line(message) .. "\n1: Trust\n2: Not now\nType number and <Enter> (q or empty cancels): "
  local ok, text = pcall(vim.fn.input, { prompt = prompt, cancelreturn = "" })
  text = ok and vim.trim(text) or "" -- (<C-c> raises "Keyboard interrupt")
  if text:sub(1, 1) == ":" then
    on_answer(nil, text)
  elseif text == "1" then
    on_answer("Trust")
  elseif text == "2" or text == "q" or text == "" then
    on_answer("Not now")
  else
    on_answer(nil)
  end
end

local function ask_now(question)
  local function answered(title, typed)
    vim.schedule(function()
      record(question.message, title or (typed and ("no answer (" .. typed .. " typed: it runs)") or "no answer"))
      vim.cmd("redraw")
      if title == "Trust" then
        require("forge.commands").trust()
        return
      end
      if not (typed and typed:match("^:%s*ForgeTr")) then
        notify(TRUST_HINT, levels.WARN)
      end
      if typed then
        vim.api.nvim_feedkeys(typed .. "\r", "nt", false)
      end
    end)
  end
  if builtin_select() then
    ask_line(question.message, answered)
    return
  end
  ask(question.message, { { title = "Trust" }, { title = "Not now" } }, function(choice)
    answered(choice and choice.title or nil)
  end)
end

--- The question is still to be asked when the server still does not trust the workspace (the user may have
--- typed :ForgeTrust, or run `forge-lsp trust`, meanwhile): then on_still().
local function still_untrusted(question, on_still)
  local client = question.client_id and vim.lsp.get_client_by_id(question.client_id)
  if not client then
    on_still()
    return
  end
  local params = { command = "forge.status", arguments = { vim.empty_dict() } }
  local function handler(err, result)
    vim.schedule(function()
      if err or type(result) ~= "table" or result.trusted ~= true then
        on_still()
      end
    end)
  end
  if vim.fn.has("nvim-0.11") == 1 then
    client:request("workspace/executeCommand", params, handler)
  else
    client.request("workspace/executeCommand", params, handler)
  end
end

local function check()
  if not pending or not idle() then
    return
  end
  local question = pending
  pending = nil
  stop_waiting()
  still_untrusted(question, function()
    if pending then -- a newer question came meanwhile: that one is asked
      return
    end
    if idle() then
      ask_now(question)
    else
      M.ask_when_idle(question)
    end
  end)
end

--- Ask the Trust question once the user is idle: Normal mode, nothing typed for idle_ms, no key pending, not in
--- the command line or its window. It never comes over what the user is typing, so it takes no key meant for
--- something else (a `:ForgeTrust` typed as it arrives is the command's, and trusts). Asked through a picker
--- plugin's vim.ui.select, or as Neovim's own numbered list read as a line (ask_line: a command typed at it
--- still runs); only "Trust" trusts; "Not now", Escape, or a stray key leave the workspace untrusted and say
--- how to trust it later.
function M.ask_when_idle(question)
  pending = question
  if timer then
    return
  end
  timer = uv.new_timer()
  timer:start(250, 250, vim.schedule_wrap(check))
end

local function ask_trust(message, client_id)
  if #vim.api.nvim_list_uis() == 0 then
    notify(TRUST_HINT, levels.WARN)
    record(message, "no answer (no UI to ask)")
    return
  end
  M.ask_when_idle({ message = message, client_id = client_id })
end

local function is_trust_question(actions)
  return #actions == 2 and actions[1].title == "Trust" and actions[2].title == "Not now"
end

--- window/showMessageRequest: the Continue offer after an interrupt, Allow/Deny and Trust questions.
function M.on_message_request(_, params, ctx)
  local actions = params and params.actions or {}
  local message = params and params.message or ""
  if #actions == 0 then
    notify(message, message_levels[params and params.type] or levels.INFO)
    return vim.NIL
  end
  if is_trust_question(actions) then
    -- Not held open: the server needs no answer (":ForgeTrust" is what trusts), and the question
    -- must not block startup nor come over what the user types: it is asked once they are idle.
    ask_trust(message, ctx and ctx.client_id)
    return vim.NIL
  end
  local is_continue = #actions == 1 and actions[1].title == "Continue"
  if is_continue and config.options.auto_continue then
    notify(message .. " (continuing)", levels.WARN)
    record(message, "Continue (auto_continue)")
    return actions[1]
  end
  if #vim.api.nvim_list_uis() == 0 then
    -- Headless: nobody to ask; the interrupt is still told once (without the question).
    local told = message:gsub("%s*Continue anyway%?$", "")
    notify(told .. (is_continue and "; :ForgeContinue continues it" or ""), levels.WARN)
    record(message, "no answer (no UI to ask)")
    return vim.NIL
  end
  if is_continue then
    -- Stop is the plugin's: the server takes it as no answer, and the statusline leaves "interrupted".
    actions = { actions[1], { title = STOP } }
  end
  local function answered(choice, note)
    record(message, (choice and choice.title or "no answer") .. (note or ""))
    -- The prompt stays in the message area otherwise, and the next message would ask for ENTER.
    vim.cmd("redraw")
    if is_continue and not choice then
      -- Dismissed (Escape, q): the turn stays interrupted, and the user is told how to go on.
      notify(CONTINUE_HINT, levels.WARN)
    elseif is_continue and choice.title == STOP then
      events.stop()
    end
  end
  --- What the server gets: Stop is no answer.
  local function reply(choice)
    if choice and choice.title ~= STOP then
      return choice
    end
    return vim.NIL
  end
  local co = coroutine.running()
  if co and coroutine.isyieldable and coroutine.isyieldable() then
    -- 0.10+: the request is handled in a coroutine, so an asynchronous picker can take its time.
    ask(message, actions, function(choice)
      vim.schedule(function()
        answered(choice)
        coroutine.resume(co, reply(choice))
      end)
    end)
    return coroutine.yield()
  end
  -- Older Neovim answers the request when this returns: fine for the default (synchronous) select.
  local sync = true
  local done, answer = ask(message, actions, function(choice)
    if sync or not choice or choice.title == STOP then
      answered(choice)
      return
    end
    -- The server has had "no answer" already: do what the answer asks from here where we can.
    -- (Loaded here: the commands need the client, whose handlers are this module's.)
    local commands = require("forge.commands")
    if is_continue then
      answered(choice)
      commands.run("Continue.")
    else
      answered(choice, " (too late: taken as no answer)")
      notify("Forge: the answer came after the server stopped waiting; it was taken as no answer (Deny)", levels.WARN)
    end
  end)
  sync = false
  if not done then
    return vim.NIL
  end
  return reply(answer)
end

--- window/showMessage.
function M.on_show_message(_, result)
  notify(result.message, message_levels[result.type] or levels.INFO)
  if type(result.message) == "string" and result.message:find("^Forge: MCP server %S+ failed: ") then
    require("forge.mcp").refresh_if_shown()
  end
  return vim.NIL
end

return M
