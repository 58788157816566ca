-- CodeCompanion.nvim (vendored) drives `forge-lsp acp`, headless, as a person would: the setup snippet
-- of docs/acp.md, a chat, a prompt typed into it and submitted, each permission prompt answered with its
-- key in the chat buffer. What the chat shows is written to CC_RESULT (JSON) for
-- tests/agent_protocol/test_codecompanion.py to check. Run: nvim --headless --clean -u drive.lua
local env = vim.env
local result = { lines = {}, finished = {}, chat_done = 0, approvals = {}, notices = {}, errors = {} }

local function write_result()
  local file = assert(io.open(env.CC_RESULT, "w"))
  file:write(vim.json.encode(result))
  file:close()
end

local function main()
  for _, name in ipairs({ "plenary.nvim", "codecompanion.nvim" }) do
    vim.opt.runtimepath:prepend(env.CC_VENDOR .. "/" .. name)
  end
  vim.cmd("runtime! plugin/codecompanion.lua")

  -- What CodeCompanion tells the user outside the chat (its log's WARN and ERROR go through vim.notify).
  vim.notify = function(msg, level)
    table.insert(result.notices, { message = tostring(msg), level = level })
  end

  dofile(env.CC_SETUP) -- docs/acp.md's snippet, as a user would paste it

  local answers = vim.split(env.CC_ANSWERS or "", ",", { trimempty = true })
  local chat
  vim.api.nvim_create_autocmd("User", {
    pattern = "CodeCompanionToolApprovalRequested",
    callback = function()
      local key = table.remove(answers, 1)
      local lines = vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)
      table.insert(result.approvals, { lines = lines, key = key or "" })
      if key then
        vim.schedule(function() -- after the prompt and its keymaps are in place, as the user would see them
          vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.bufnr))
          vim.cmd("stopinsert")
          vim.api.nvim_feedkeys(vim.keycode(key), "mx", false)
        end)
      end
    end,
  })
  vim.api.nvim_create_autocmd("User", {
    pattern = "CodeCompanionRequestFinished",
    callback = function(args)
      table.insert(result.finished, { status = args.data.status, error = args.data.error })
    end,
  })
  vim.api.nvim_create_autocmd("User", {
    pattern = "CodeCompanionChatDone",
    callback = function()
      result.chat_done = result.chat_done + 1
    end,
  })

  chat = require("codecompanion").chat()
  assert(chat, "no chat was opened")
  result.adapter = chat.adapter.name
  local timeout = tonumber(env.CC_TIMEOUT_MS or "60000")
  -- The chat connects to the agent in the background; a person types the prompt meanwhile. Submitting
  -- before the session exists makes CodeCompanion start a second one (its own race, not the agent's).
  result.connected = vim.wait(timeout, function()
    return chat.acp_connection ~= nil and chat.acp_connection.session_id ~= nil
  end, 50)
  if env.CC_RESUME == "1" then
    -- "/resume" picked from the chat's slash commands, then the first conversation in its picker.
    vim.ui.select = function(items, _, on_choice)
      result.resume_choices = items
      on_choice(items[1], 1)
    end
    local restored = false
    vim.api.nvim_create_autocmd("User", {
      pattern = "CodeCompanionACPChatRestored",
      callback = function()
        restored = true
      end,
    })
    local slash = require("codecompanion.config").interactions.chat.slash_commands
    require("codecompanion.interactions.chat.slash_commands").run({ label = "resume", config = slash.resume }, chat)
    result.restored = vim.wait(timeout, function()
      return restored
    end, 50)
  end
  -- Each prompt (CC_PROMPT, then CC_NEXT_PROMPT if set) typed into the chat and submitted, once the chat
  -- is ready for it (ChatDone).
  local function turn(prompt, stop_at)
    local done_before = result.chat_done
    chat:add_buf_message({ role = "user", content = prompt })
    chat:submit()
    if stop_at then
      -- The user stops the turn (the chat's `q`) once the line stop_at shows (and the file CC_STOP_FILE
      -- exists: the command has started).
      result.stopped = vim.wait(timeout, function()
        return vim.tbl_contains(vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false), stop_at)
          and (env.CC_STOP_FILE == nil or vim.uv.fs_stat(env.CC_STOP_FILE) ~= nil)
      end, 20)
      vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.bufnr))
      vim.cmd("stopinsert")
      vim.api.nvim_feedkeys("q", "mx", false)
    end
    return vim.wait(timeout, function()
      return result.chat_done > done_before and chat.current_request == nil
    end, 50)
  end
  result.settled = turn(env.CC_PROMPT, env.CC_STOP_AT)
  if result.settled and env.CC_NEXT_PROMPT then
    result.settled = turn(env.CC_NEXT_PROMPT)
  end
  vim.wait(300) -- the last updates' extmarks (icons) and any late message
  result.in_progress = chat.current_request ~= nil
  result.session_id = chat.acp_connection and chat.acp_connection.session_id

  -- The chat buffer's lines, each with the tool status its icon shows (CodeCompanion's icon highlight).
  local statuses = {
    CodeCompanionChatToolPending = "pending",
    CodeCompanionChatToolInProgress = "in_progress",
    CodeCompanionChatToolSuccessIcon = "completed",
    CodeCompanionChatToolFailureIcon = "failed",
  }
  local icons = require("codecompanion.interactions.chat.ui.icons").ns()
  local by_line = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.bufnr, icons, 0, -1, { details = true })) do
    local chunk = mark[4].virt_text and mark[4].virt_text[1]
    by_line[mark[2]] = chunk and statuses[chunk[2]] or by_line[mark[2]]
  end
  for i, text in ipairs(vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)) do
    table.insert(result.lines, { text = text, status = by_line[i - 1] or vim.NIL })
  end
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  table.insert(result.errors, tostring(err))
end
write_result()
vim.cmd("qall!")
