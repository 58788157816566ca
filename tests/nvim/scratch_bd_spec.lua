-- Forge's scratch windows after the user's :bd (tests/nvim/test_nvim_scratch.py): the log closed with :bd, then
-- more lines appended and shown again, must still be a scratch buffer, so that :qa quits. Prints the log buffer's
-- state as one JSON line, then quits with :qall; a second line says what refused it, if something did.
-- Env: FORGE_PLUGIN.
vim.opt.runtimepath:prepend(vim.env.FORGE_PLUGIN)
local log = require("forge.log")
log.append("first line")
log.open()
vim.cmd("bdelete")
log.append("after :bd")
log.open()
local buf = vim.api.nvim_get_current_buf()
io.stdout:write(vim.json.encode({
  name = vim.api.nvim_buf_get_name(buf),
  buftype = vim.bo[buf].buftype,
  modified = vim.bo[buf].modified,
  lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
}) .. "\n")
local ok, err = pcall(vim.cmd, "qall")
if not ok then
  io.stdout:write(vim.json.encode({ refused = tostring(err) }) .. "\n")
end
vim.cmd("qa!")
