-- Forge's scratch windows (the log, the config): one buffer per name, shown at the bottom, q closes.
local M = {}

function M.buffer(name, filetype)
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

--- Show buf in a window at the bottom, reusing the one that shows it already.
function M.show(buf)
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

return M
