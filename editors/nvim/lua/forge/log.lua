-- The event log (forge://log): one line per event, each assistant message whole, each question asked
-- with its answer.
local scratch = require("forge.scratch")

local M = {}

local log_buf = nil

local function log_buffer()
  if not (log_buf and vim.api.nvim_buf_is_valid(log_buf) and vim.bo[log_buf].buftype == "nofile") then
    -- New, or unloaded by the user's :bd (its options reset): scratch.buffer makes it a scratch buffer again.
    log_buf = scratch.buffer("forge://log", "forgelog")
    -- Read-only to the user: only the plugin appends.
    vim.bo[log_buf].modifiable = false
  end
  return log_buf
end

--- Append lines (a string may hold newlines: buffer lines cannot) to the log buffer.
function M.append(lines)
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
  vim.bo[buf].modifiable = true
  if count == 1 and first == "" then
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, split)
  else
    vim.api.nvim_buf_set_lines(buf, count, count, false, split)
  end
  vim.bo[buf].modifiable = false
  -- A visible log window follows the end.
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
    end
  end
end

function M.open()
  local buf = log_buffer()
  local win = scratch.show(buf)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
end

return M
