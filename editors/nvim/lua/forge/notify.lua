-- Messages in the message area, through vim.notify (setup option notify = false silences them).
local config = require("forge.config")

local M = {}

--- One line for the message area: a second line (or a wrap) would bring up "Press ENTER".
function M.one_line(msg)
  return (tostring(msg):gsub("%s*\n%s*", " · "))
end

local SEE_LOG = "… (:ForgeLog)"

--- msg cut to what the message area shows without wrapping (a wrap brings up "Press ENTER");
--- the whole of it goes into the log. Headless there is no message area: msg as it is.
function M.fit(msg)
  if #vim.api.nvim_list_uis() == 0 then
    return msg
  end
  local room = (vim.v.echospace or vim.o.columns) - 1
  if room < 30 or vim.fn.strdisplaywidth(msg) <= room then
    return msg
  end
  require("forge.log").append("  ! " .. msg)
  local keep = room - vim.fn.strdisplaywidth(SEE_LOG)
  local cut = msg
  while vim.fn.strdisplaywidth(cut) > keep do
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - math.max(1, vim.fn.strdisplaywidth(cut) - keep))
  end
  return cut .. SEE_LOG
end

function M.notify(msg, level)
  if config.options.notify then
    vim.notify(M.fit(M.one_line(msg)), level or vim.log.levels.INFO, { title = "Forge" })
  end
end

return M
