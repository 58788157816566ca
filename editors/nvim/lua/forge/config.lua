-- forge.nvim's options: the defaults, and what setup() made of them.
local M = {}

---@class ForgeConfig
---@field cmd string[] command that starts the server
---@field settings table editor settings, sent as initializationOptions and workspace/configuration "forge"
---@field root_markers string[] files that mark the workspace root, the most preferred first
---@field autostart_markers string[] opening a file below one of these starts the server (others wait for a :Forge command)
---@field notify boolean show results, retries and questions' outcomes with vim.notify
---@field auto_continue boolean answer "Continue" after an interrupt without asking
---@field reply "float"|"split"|"none" where a completed turn's reply is shown
---@field on_event fun(event: table)|nil called with every forge/event after the plugin has shown it
---@field mcp_servers table|nil MCP servers by name ({command, args, env, cwd} or {url, headers}), sent as settings.mcpServers
M.options = {
  cmd = { "forge-lsp" },
  settings = {},
  root_markers = { ".forge.toml", ".git" },
  autostart_markers = { ".forge.toml" },
  notify = true,
  auto_continue = false,
  reply = "float",
}

--- Whether setup() was called: its options then describe the server, not vim.lsp.config("forge").
M.did_setup = false

--- The settings the server gets: settings, with mcp_servers as settings.mcpServers.
function M.server_settings()
  local settings = vim.deepcopy(M.options.settings or {})
  if type(M.options.mcp_servers) == "table" and next(M.options.mcp_servers) ~= nil then
    settings.mcpServers = vim.deepcopy(M.options.mcp_servers)
  end
  return settings
end

--- The forge-lsp clone this plugin is in (its editors/nvim), or nil for a copy of the plugin elsewhere.
function M.clone_root()
  local source = debug.getinfo(1, "S").source
  if source:sub(1, 1) ~= "@" then
    return nil
  end
  -- lua/forge/config.lua -> lua/forge -> lua -> nvim -> editors -> the clone (links resolved: a plugin
  -- manager may link to editors/nvim)
  local root = vim.fn.fnamemodify(vim.fn.resolve(vim.fn.fnamemodify(source:sub(2), ":p")), ":h:h:h:h:h")
  if vim.fn.filereadable(root .. "/pyproject.toml") == 1 and vim.fn.isdirectory(root .. "/server/forge_lsp") == 1 then
    return root
  end
  return nil
end

--- The forge-lsp of the clone's virtual environment (.venv, where the README installs it), when there is one.
function M.clone_server()
  local root = M.clone_root()
  if not root then
    return nil
  end
  for _, exe in ipairs({ root .. "/.venv/bin/forge-lsp", root .. "/.venv/Scripts/forge-lsp.exe" }) do
    if vim.fn.executable(exe) == 1 then
      return exe
    end
  end
  return nil
end

--- cmd as it is started: a bare "forge-lsp" that is not on PATH is the one in the clone's virtual environment
--- (Neovim need not run inside it: the README installs there, and an editor started from another shell has
--- another PATH).
function M.server_cmd(cmd)
  if type(cmd) == "table" and cmd[1] == "forge-lsp" and vim.fn.executable("forge-lsp") == 0 then
    local exe = M.clone_server()
    if exe then
      local resolved = vim.deepcopy(cmd)
      resolved[1] = exe
      return resolved
    end
  end
  return cmd
end

--- Merge opts into the options. The table stays the same one, so that no module holds a stale copy.
function M.set(opts)
  local merged = vim.tbl_deep_extend("force", M.options, opts or {})
  for key, value in pairs(merged) do
    M.options[key] = value
  end
end

return M
