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

--- The Trust question, asked once Neovim is up (not over the file being opened), through
--- vim.ui.select. Only "Trust" trusts; "Not now", Escape, or a stray key (":w" typed at the default
--- numbered list) leave the workspace untrusted and say how to trust it later.
local function ask_trust(message)
  local function now()
    if #vim.api.nvim_list_uis() == 0 then
      notify(TRUST_HINT, levels.WARN)
      record(message, "no answer (no UI to ask)")
      return
    end
    ask(message, { { title = "Trust" }, { title = "Not now" } }, function(choice)
      vim.schedule(function()
        record(message, choice and choice.title or "no answer")
        vim.cmd("redraw")
        if choice and choice.title == "Trust" then
          require("forge.commands").trust()
        else
          notify(TRUST_HINT, levels.WARN)
        end
      end)
    end)
  end
  if vim.v.vim_did_enter == 1 then
    vim.schedule(now)
  else
    vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = vim.schedule_wrap(now) })
  end
end

local function is_trust_question(actions)
  return #actions == 2 and actions[1].title == "Trust" and actions[2].title == "Not now"
end

--- window/showMessageRequest: the Continue offer after an interrupt, Allow/Deny and Trust questions.
function M.on_message_request(_, params)
  local actions = params and params.actions or {}
  local message = params and params.message or ""
  if #actions == 0 then
    notify(message, message_levels[params and params.type] or levels.INFO)
    return vim.NIL
  end
  if is_trust_question(actions) then
    -- Not held open: the server needs no answer (":ForgeTrust" is what trusts), and the question
    -- must not block startup; it is asked once the editor is up.
    ask_trust(message)
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
