-- Forge's scratch windows (the log, the config): one buffer per name, shown at the bottom, q closes.
local M = {}

--- The options that make it a scratch buffer. `:bd` on it unloads it and resets them (buftype "" again): text
--- added after that made it a modified file buffer, and `:qa` then refused to quit (E37, E162 for forge://log).
local function scratch_options(buf, filetype)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.fn.bufload(buf)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modified = false
  if vim.bo[buf].filetype ~= filetype then
    vim.bo[buf].filetype = filetype
  end
end

function M.buffer(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf ~= -1 and vim.api.nvim_buf_is_valid(buf) then
    scratch_options(buf, filetype)
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  scratch_options(buf, filetype)
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
