-- Messages in the message area, through vim.notify (setup option notify = false silences them).
local config = require("forge.config")

local M = {}

--- One line for the message area: a second line (or a wrap) would bring up "Press ENTER".
function M.one_line(msg)
  return (tostring(msg):gsub("%s*\n%s*", " · "))
end

function M.notify(msg, level)
  if config.options.notify then
    vim.notify(M.one_line(msg), level or vim.log.levels.INFO, { title = "Forge" })
  end
end

return M
