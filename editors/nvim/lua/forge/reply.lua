-- The assistant's reply at the end of a turn, where the user looks: a float at the cursor (closed
-- when the cursor moves), or the split forge://reply; the setup option reply picks which ("none":
-- only :ForgeLog has it).
local config = require("forge.config")
local scratch = require("forge.scratch")

local M = {}

local float_win = nil

local function close_float()
  if float_win and vim.api.nvim_win_is_valid(float_win) then
    pcall(vim.api.nvim_win_close, float_win, true)
  end
  float_win = nil
end

local function show_float(lines)
  close_float()
  local _, win = vim.lsp.util.open_floating_preview(lines, "markdown", {
    border = "rounded",
    max_width = math.max(20, math.min(100, vim.o.columns - 4)),
    max_height = math.max(3, math.floor(vim.o.lines / 2)),
    focusable = true,
    close_events = { "CursorMoved", "CursorMovedI", "InsertCharPre", "BufLeave" },
  })
  float_win = win
  return win
end

local function show_split(lines)
  local buf = scratch.buffer("forge://reply", "markdown")
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  -- Shown, not entered: the user goes on where they were.
  local from = vim.api.nvim_get_current_win()
  local win = scratch.show(buf)
  vim.api.nvim_win_set_height(win, math.max(3, math.min(#lines, math.floor(vim.o.lines / 3))))
  if vim.api.nvim_win_is_valid(from) then
    vim.api.nvim_set_current_win(from)
  end
  return win
end

--- The last turn's reply float goes when the next turn starts (it answered the previous prompt) and when
--- a turn is undone.
M.close = close_float

--- A completed turn's reply (turnFinished's summary.text), shown as the reply option says.
--- Returns the window it is shown in (nil: not shown).
function M.show(event)
  local summary = type(event.summary) == "table" and event.summary or {}
  local text = type(summary.text) == "string" and vim.trim(summary.text) or ""
  local where = config.options.reply
  if event.status ~= "completed" or text == "" or where == "none" or where == false then
    return nil
  end
  local lines = vim.split(text, "\n", { plain = true })
  if where == "split" then
    return show_split(lines)
  end
  return show_float(lines)
end

return M
