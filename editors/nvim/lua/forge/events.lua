-- forge/event and $/progress: each event as a log line, the turn's state for the statusline, and
-- the one notification a turn ends with.
local config = require("forge.config")
local log = require("forge.log")
local notify = require("forge.notify").notify

local M = {}

-- What the events told so far: for the statusline, the turn's status and progress message and the
-- last turn's usage; for the log, the assistant text streamed since its last line.
local state = { status = "idle", turn_id = nil, progress = nil, last_usage = nil, text = nil, interrupted = false }

local levels = vim.log.levels

--- "1 request", "2 requests".
local function count(n, one, many)
  n = tonumber(n) or 0
  return string.format("%d %s", n, n == 1 and one or (many or one .. "s"))
end
M.count = count

local function summary_line(s)
  return table.concat({
    count(s.requests, "request"),
    count(s.toolCalls, "tool call"),
    count(s.failures, "failure"),
  }, ", ")
end

--- forge.run's and turnFinished's problems {count, files = {{path, count}}} as "2 new problems in app.py" (nil: none).
local function problems_phrase(problems)
  if type(problems) ~= "table" or (tonumber(problems.count) or 0) == 0 then
    return nil
  end
  local files = {}
  for _, f in ipairs(type(problems.files) == "table" and problems.files or {}) do
    table.insert(files, tostring(f.path))
  end
  local where
  if #files <= 1 then
    where = files[1] or "?"
  elseif #files <= 3 then
    where = table.concat(files, ", ", 1, #files - 1) .. " and " .. files[#files]
  else
    where = table.concat(files, ", ", 1, 3) .. " and " .. count(#files - 3, "more file")
  end
  return count(problems.count, "new problem") .. " in " .. where
end
M.problems_phrase = problems_phrase

--- The log's end of a turn says more than its notification: the files it changed, replies cut at the limit.
local function log_summary_line(s)
  local line = summary_line(s)
  if s.filesChanged ~= nil then
    line = line .. ", " .. count(s.filesChanged, "file") .. " changed"
  end
  if (tonumber(s.repliesCut) or 0) > 0 then
    line = line .. ", " .. count(s.repliesCut, "reply", "replies") .. " cut at the token limit"
  end
  return line
end

-- What starts the part of a prompt that the server added from the editor (docs/design.md "The editor's context").
local EDITOR_CONTEXT = "\n\nContext from the editor:\n"

--- The user's own text of a turn's prompt: without what the editor added (the selection, unsaved diffs),
--- which turnStarted's context names instead.
local function own_prompt(prompt, context)
  prompt = type(prompt) == "string" and prompt or ""
  if type(context) ~= "table" or next(context) == nil then
    return prompt
  end
  local cut, from = nil, 1
  while true do -- the last one: the user's own text may quote the heading
    local at = prompt:find(EDITOR_CONTEXT, from, true)
    if not at then
      break
    end
    cut, from = at, at + 1
  end
  return cut and prompt:sub(1, cut - 1) or prompt
end

--- An LSP Range as "line 3" or "lines 3-5" (a whole-line selection ends on the line before its end).
local function range_lines(range)
  local ok, first, last, char = pcall(function()
    return range.start.line + 1, range["end"].line + 1, range["end"].character
  end)
  if not ok or type(first) ~= "number" or type(last) ~= "number" then
    return nil
  end
  if last > first and char == 0 then
    last = last - 1
  end
  return first == last and ("line " .. first) or string.format("lines %d-%d", first, last)
end

--- turnStarted's context {file?, range?, unsaved?} as one phrase: "main.py (lines 2-3); unsaved in the editor: a.py".
local function context_text(context)
  local parts = {}
  if type(context.file) == "string" then
    local lines = context.range and range_lines(context.range)
    table.insert(parts, lines and string.format("%s (%s)", context.file, lines) or context.file)
  end
  if type(context.unsaved) == "table" and #context.unsaved > 0 then
    table.insert(parts, "unsaved in the editor: " .. table.concat(vim.tbl_map(tostring, context.unsaved), ", "))
  end
  return table.concat(parts, "; ")
end

local function format_event(e)
  local t = e.type
  if t == "turnStarted" then
    local by = (e.agent and e.agent ~= "forge") and (", agent " .. e.agent) or ""
    -- The user's prompt (its later lines indented under it) and one line for what the editor added.
    local prompt = own_prompt(e.prompt, e.context):gsub("\n", "\n  ")
    local line = string.format("▶ turn %s started (model %s%s): %s", e.turnId, e.model or "?", by, prompt)
    local context = type(e.context) == "table" and context_text(e.context) or ""
    return context ~= "" and (line .. "\n  context: " .. context) or line
  elseif t == "toolCallStarted" then
    return "  → " .. ((e.title and e.title ~= "") and e.title or e.tool)
  elseif t == "toolCallFinished" then
    if e.ok then
      return "  ✓ " .. e.tool
    end
    -- The failure's cause, as the CLI prints it (the output holds <cause>...</cause> and the reflection).
    local output = type(e.output) == "string" and e.output or ""
    local cause = output:match("<cause>(.-)</cause>") or output
    -- A call the repeated-call stop kept from running: no failure of the tool's. Its first sentence, as the CLI.
    local not_run = cause:match("^not run: (.*)")
    if not_run then
      return "  ⊘ " .. e.tool .. " not run: " .. (not_run:match("^(.-)%. ") or not_run)
    end
    cause = vim.trim(cause):match("^[^\n]*")
    return "  ✗ " .. e.tool .. " failed" .. (cause ~= "" and (": " .. cause) or "")
  elseif t == "retry" then
    return string.format("  ↻ %s failed: %d of %s left", e.tool, e.attemptsLeft, count(e.limit, "attempt"))
  elseif t == "llmRetry" then
    return string.format("  ⟳ model request retry %d in %d ms: %s", e.attempt, e.delayMs, e.cause)
  elseif t == "modelNotice" then
    return (e.level == "info" and "  ℹ " or "  ⚠ ") .. tostring(e.message or e.code)
  elseif t == "reminder" then
    local first = type(e.text) == "string" and vim.trim(e.text):match("^[^\n]*") or ""
    return string.format("  ↺ reminder to the model (%s): %s", tostring(e.kind), first)
  elseif t == "problems" then
    -- The editor's own diagnostics of the file a call changed, once its language servers caught up (forge.verify).
    local late = e.caughtUp == false and ", its language servers had not reported yet" or ""
    if (tonumber(e.count) or 0) == 0 then
      return string.format("  · editor: no new problems in %s (%s ms%s)", tostring(e.path), tostring(e.waitedMs), late)
    end
    local lines = {
      string.format("  ⚠ editor: %s in %s (%s ms%s)%s", count(e.count, "new problem"), tostring(e.path), tostring(e.waitedMs), late,
        e.failed and "; the call counts as failed" or ""),
    }
    for _, p in ipairs(type(e.problems) == "table" and e.problems or {}) do
      local origin = ""
      for _, part in ipairs({ p.source or "", p.code or "" }) do
        if part ~= "" and part ~= vim.NIL then
          origin = origin .. " " .. tostring(part)
        end
      end
      table.insert(lines, string.format("      %s:%s:%s: %s%s: %s", tostring(p.path), tostring(p.line), tostring(p.column),
        tostring(p.severity), origin, tostring(p.message)))
    end
    return table.concat(lines, "\n")
  elseif t == "interrupt" then
    return "  ⛔ " .. (e.message or e.reason.kind)
  elseif t == "turnFinished" then
    local line = "■ turn " .. tostring(e.status)
    if type(e.summary) == "table" then
      line = line .. ": " .. log_summary_line(e.summary)
    end
    local left = problems_phrase(e.problems)
    if left then
      line = line .. "\n  left: " .. left
    end
    return line
  end
  return nil
end

--- The end of a turn, told once: completed/cancelled here; an interrupt by its Continue question,
--- a failure by the server's error message.
local function announce_finished(e)
  local s = type(e.summary) == "table" and e.summary or {}
  local left = problems_phrase(e.problems)
  if e.status == "completed" and left then
    -- Not a plain "completed": the editor reports problems the turn's edits made (forge.verify).
    notify("Forge: turn completed; " .. left .. " (" .. summary_line(s) .. ")", levels.WARN)
  elseif e.status == "completed" then
    notify("Forge: turn completed (" .. summary_line(s) .. ")")
  elseif e.status == "cancelled" then
    -- A :ForgeCancel's answer says what was stopped (M.cancel_answered); otherwise ($/cancelRequest) this is all.
    if not state.cancel_asked then
      notify("Forge: turn cancelled")
    end
  elseif e.status == "failed" and not s.error then
    notify("Forge: turn failed (" .. summary_line(s) .. ")", levels.ERROR)
  end
end

local function flush_text()
  local text = state.text
  state.text = nil
  if text and vim.trim(text) ~= "" then
    log.append("  assistant: " .. vim.trim(text))
  end
end

local function handle_event(event)
  local t = event.type
  -- Streamed text is gathered and logged once per message.
  if t == "assistantText" then
    state.text = (state.text or "") .. tostring(event.text or "")
    return
  end
  flush_text()
  local line = format_event(event)
  if line then
    log.append(line)
  end
  if t == "turnStarted" then
    state.cancel_asked = false -- a cancel whose answer never came (an error, told) is no cancel of this turn
    state.status = "running"
    state.turn_id = event.turnId
    state.turn_agent = event.agent
    if state.agent == nil then
      -- Not known yet (nothing asked since the start): the turn's agent is the best guess of the conversation's.
      state.agent = event.agent
    end
    state.interrupted = false
    require("forge.reply").close()
  elseif t == "toolCallStarted" then
    state.status = "running " .. event.tool
    state.tool = event.tool
  elseif t == "toolCallFinished" then
    state.tool = nil
  elseif t == "retry" then
    state.status = string.format("retry %d left (%s)", event.attemptsLeft, event.tool)
    notify(string.format("Forge: %s failed; %s left", event.tool, count(event.attemptsLeft, "attempt")), levels.WARN)
  elseif t == "interrupt" then
    state.status = "interrupted"
    state.interrupted = true
  elseif t == "turnFinished" then
    if event.status ~= "interrupted" then
      state.status = "idle"
    end
    state.turn_id = nil
    state.turn_agent = nil
    state.tool = nil
    -- The turn's progress message goes with it (should its progress end not come).
    state.progress = nil
    if type(event.usage) == "table" then
      state.last_usage = event.usage
    end
    announce_finished(event)
    require("forge.reply").show(event)
  end
  vim.cmd("redrawstatus")
end

--- The forge/event handler; the on_event option sees each event after the plugin has shown it.
function M.on_event(_, event)
  if type(event) ~= "table" then
    return
  end
  -- A plugin bug must not throw "Error executing lua callback" at the user on every event.
  local ok, err = pcall(handle_event, event)
  if not ok then
    log.append("forge.nvim: could not show event " .. tostring(event.type) .. ": " .. tostring(err))
  end
  local hook = config.options.on_event
  if hook then
    ok, err = pcall(hook, event)
    if not ok then
      log.append("forge.nvim: on_event failed on " .. tostring(event.type) .. ": " .. tostring(err))
    end
  end
end

--- A token count as people read it: "980 tokens", "12.3k tokens".
function M.tokens_text(n)
  n = tonumber(n) or 0
  if n >= 1000 then
    return string.format("%.1fk tokens", n / 1000)
  end
  return count(n, "token")
end

--- :ForgeCancel was sent (asked false: it could not be): the turn's end is told by its answer, which says
--- what the server stopped.
function M.note_cancel(asked)
  state.cancel_asked = asked ~= false
end

--- forge.cancel's answer {cancelled, stopped?}: told once, in the server's words of what was stopped (a shell
--- command killed, the model's reply), not guessed from the events this plugin happened to see.
function M.cancel_answered(result)
  state.cancel_asked = false
  if type(result) ~= "table" or not result.cancelled then
    notify("Forge: no turn is running")
    return
  end
  local stopped = type(result.stopped) == "string" and result.stopped ~= "" and ("; " .. result.stopped) or ""
  notify("Forge: turn cancelled" .. stopped)
end

--- A usage {promptTokens, completionTokens, cost} as "12.3k tokens $0.0321" ("cost unknown" when unpriced).
function M.usage_text(u)
  if type(u) ~= "table" then
    return ""
  end
  local n = (tonumber(u.promptTokens) or 0) + (tonumber(u.completionTokens) or 0)
  local tokens = M.tokens_text(n)
  local cost = type(u.cost) == "number" and string.format("$%.4f", u.cost) or "cost unknown"
  return tokens .. " " .. cost
end

--- Whether the last turn was interrupted and not continued or stopped since (:ForgeContinue).
--- The id of the running (or last) turn.
function M.turn_id()
  return state.turn_id
end

function M.interrupted()
  return state.interrupted == true
end

--- Stop was the answer to Continue: the interrupted turn is over.
function M.stop()
  state.interrupted = false
  state.status = "idle"
  vim.cmd("redrawstatus")
end

--- Another conversation was opened: the last turn's usage is not its.
function M.forget_usage()
  state.last_usage = nil
end

--- The conversation's agent (forge.setAgent, forge.status, forge.listAgents said so).
function M.set_agent(id)
  state.agent = type(id) == "string" and id or nil
  vim.cmd("redrawstatus")
end

--- For 'statusline': %{v:lua.require'forge'.statusline()}; names the agent when it is not forge.
function M.statusline()
  local agent = state.turn_id and state.turn_agent or state.agent
  local s = (agent and agent ~= "forge") and ("Forge (" .. agent .. "): " .. state.status) or ("Forge: " .. state.status)
  if state.progress then
    s = s .. " · " .. state.progress
  end
  if state.last_usage and not state.turn_id then
    s = s .. " · " .. M.usage_text(state.last_usage)
  end
  return s
end

--- The $/progress handler: the running turn's progress message goes into the statusline.
function M.on_progress(err, result, ctx, config)
  local value = result and result.value or {}
  if value.kind == "end" then
    state.progress = nil
  elseif value.message then
    state.progress = value.message
  end
  vim.cmd("redrawstatus")
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

return M
