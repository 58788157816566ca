-- The plugin's command table as Neovim has it once plugin/forge.lua ran (no setup()): each row with what it
-- made, printed as one JSON line for tests/nvim/test_nvim_command_table.py. Env: FORGE_PLUGIN.
vim.opt.runtimepath:prepend(vim.env.FORGE_PLUGIN)
vim.cmd("runtime plugin/forge.lua")
local forge = require("forge")
local rows = {}
for _, row in ipairs(require("forge.commands").table()) do
  local plugs = {}
  for _, plug in ipairs(row.plugs) do
    local mode, name = plug[1], plug[2]
    table.insert(plugs, { mode = mode, name = name, mapped = vim.fn.maparg("<Plug>(forge-" .. name .. ")", mode) ~= "" })
  end
  table.insert(rows, { name = row.name, api = row.api, exported = forge[row.api] == row.fn, sends = row.sends, plugs = plugs })
end
local defined = {}
for name, _ in pairs(vim.api.nvim_get_commands({})) do
  if name:match("^Forge") then
    table.insert(defined, name)
  end
end
table.sort(defined)
io.stdout:write(vim.json.encode({ rows = rows, defined = defined }) .. "\n")
vim.cmd("qa!")
