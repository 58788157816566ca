-- :checkhealth forge — the server command and its version, Neovim's version, the workspace's
-- .forge.toml and its problems, whether the workspace is trusted, and its MCP servers.
local M = {}

-- 0.10+ has vim.health.start/ok/...; 0.8–0.9 vim.health.report_*; 0.7 require("health").report_*.
local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local fail = health.error or health.report_error
local info = health.info or health.report_info

local forge = require("forge")
local config = require("forge.config")
local mcp = require("forge.mcp")

--- Run argv, return its trimmed output and exit code (nil, "timeout" after timeout_ms).
local function run(argv, timeout_ms)
  local output = {}
  local collect = function(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= "" then
        table.insert(output, line)
      end
    end
  end
  local ok_start, job = pcall(vim.fn.jobstart, argv, { stdout_buffered = true, stderr_buffered = true, on_stdout = collect, on_stderr = collect })
  if not ok_start or job <= 0 then
    return nil, "cannot run"
  end
  local code = vim.fn.jobwait({ job }, timeout_ms)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, "timeout"
  end
  return table.concat(output, "\n"), code
end

local function check_neovim()
  local v = vim.version()
  local version = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. version .. (vim.fn.has("nvim-0.11") == 1 and " (vim.lsp.config/vim.lsp.enable available)" or ""))
  else
    fail("Neovim " .. version .. ": forge.nvim needs 0.7 or later")
  end
end

--- The command that starts the server, and where it was set: vim.lsp.config("forge") when the
--- plugin is used the 0.11 way (no setup()), else setup()'s cmd.
local function server_cmd()
  if not config.did_setup and vim.fn.has("nvim-0.11") == 1 and vim.lsp.config then
    local ok_config, native = pcall(function()
      return vim.lsp.config.forge
    end)
    if ok_config and type(native) == "table" and native.cmd then
      return native.cmd, 'vim.lsp.config("forge")'
    end
  end
  return config.options.cmd, "setup()"
end

--- What to do when cmd cannot run: the README's install (a virtual environment in the clone, named by its path
--- when this plugin is in one), and the line to set.
local function install_advice(where)
  local root = config.clone_root()
  local venv = (root or "/path/to/forge-lsp") .. "/.venv/bin/forge-lsp"
  local advice = {}
  if root then
    table.insert(advice, string.format(
      "install it as the README says, in this clone: cd %s && python3 -m venv .venv && .venv/bin/pip install -e . "
        .. "(cmd { 'forge-lsp' } then finds %s, without activating it)",
      root,
      venv
    ))
  else
    table.insert(advice, "install it as the README says: in a clone of forge-lsp, python3 -m venv .venv && .venv/bin/pip install -e .")
  end
  table.insert(advice, string.format(
    "or set cmd in %s to the forge-lsp of the environment that has it: cmd = { '%s' } "
      .. "(`forge-lsp --print-editor-config`, run there, prints the line)",
    where,
    venv
  ))
  return advice
end

local function check_server()
  local cmd, where = server_cmd()
  if type(cmd) == "function" then
    info("cmd (" .. where .. ") is a function: not checked here")
    return
  end
  if type(cmd) ~= "table" or not cmd[1] then
    fail("cmd is not a list of strings: " .. vim.inspect(cmd))
    return
  end
  cmd = config.server_cmd(cmd)
  if vim.fn.executable(cmd[1]) ~= 1 then
    local missing = cmd[1]:find("/", 1, true) and " is not an executable file" or " not found on PATH"
    fail(cmd[1] .. missing .. " (cmd of " .. where .. ")", install_advice(where))
    return
  end
  local argv = vim.deepcopy(cmd)
  table.insert(argv, "--version")
  local output, code = run(argv, 10000)
  if output and code == 0 and output:match("forge%-lsp") then
    local venv = cmd[1] == config.clone_server() and vim.fn.exepath("forge-lsp") == ""
    ok(table.concat(cmd, " ") .. ": " .. output .. (venv and " (the virtual environment of the clone this plugin is in: forge-lsp is not on PATH)" or ""))
  else
    fail(table.concat(argv, " ") .. " failed (" .. tostring(code) .. "): " .. tostring(output))
  end
end

local function check_workspace()
  -- :checkhealth shows its report in a buffer of its own: the file is the one the user came from.
  local bufnr, name = nil, nil
  for _, candidate in ipairs({ vim.api.nvim_get_current_buf(), vim.fn.bufnr("#") }) do
    local n = candidate > 0 and vim.api.nvim_buf_is_valid(candidate) and vim.api.nvim_buf_get_name(candidate) or ""
    if not bufnr and n ~= "" and not n:match("^%a[%w+.-]*://") then
      bufnr, name = candidate, n
    end
  end
  local where = name or vim.fn.getcwd()
  local root = forge.find_root(where, { ".forge.toml" })
  if not root then
    local last = forge.get_client(vim.api.nvim_get_current_buf())
    root = last and last.config.root_dir
  end
  if not root then
    info("no .forge.toml above " .. where .. ": the server starts on the first :Forge command")
    return nil
  end
  local file = root .. "/.forge.toml"
  local has_file = vim.fn.filereadable(file) == 1
  ok("workspace " .. root .. (has_file and (" (" .. file .. ")") or " (no .forge.toml)"))
  local client = forge.get_client(bufnr or vim.api.nvim_get_current_buf())
  if not client then
    info("no forge-lsp runs for it yet: its config problems show once it starts (:ForgeStatus)")
    return root
  end
  if not has_file then -- a plain repository (the client started on a :Forge command): no file, no problems of it
    return root, client
  end
  -- The server publishes each bad key or value of .forge.toml as a diagnostic at its line.
  local fbuf = vim.uri_to_bufnr(vim.uri_from_fname(file))
  local problems = 0
  for _, d in ipairs(vim.diagnostic.get(fbuf)) do
    problems = problems + 1
    warn(string.format(".forge.toml:%d: %s", d.lnum + 1, d.message))
  end
  if problems == 0 then
    ok(".forge.toml: no problems reported by the server")
  end
  return root, client
end

--- Whether the server reported the workspace's model as ignored (an "untrusted" diagnostic at model).
local function model_ignored(root)
  local fbuf = vim.fn.bufnr(root .. "/.forge.toml")
  if fbuf == -1 then
    return false
  end
  for _, d in ipairs(vim.diagnostic.get(fbuf)) do
    if d.code == "untrusted" and tostring(d.message):match("^model:") then
      return true
    end
  end
  return false
end

--- What trusting a workspace means, said with every advice to trust one: review first, trust what you read.
local REVIEW = "review its .forge.toml, .mcp.json and .forge/ (and the scripts they name) first, then :ForgeTrust "
  .. "trusts them as they are (`forge-lsp trust %s` in a terminal)"

local function check_trust(root, client)
  if not root then
    return
  end
  -- Neovim's own trust store (vim.secure) is neither reported nor advised: it covers .forge.toml alone, and the
  -- server's own check of every trust-relevant file decides (:ForgeTrust records both).
  if not client then
    info("no forge-lsp runs for this workspace yet: whether it is trusted is the server's to say (`forge-lsp trust " .. root .. " --status`)")
    return
  end
  local params = { command = "forge.status", arguments = { vim.empty_dict() } }
  local response = vim.fn.has("nvim-0.11") == 1 and client:request_sync("workspace/executeCommand", params, 5000)
    or client.request_sync("workspace/executeCommand", params, 5000)
  local status = response and response.result
  if type(status) ~= "table" then
    warn("forge.status did not answer: " .. vim.inspect(response and response.err))
    return
  end
  local model = status.model ~= vim.NIL and status.model or nil
  if model then
    ok("model " .. tostring(model) .. ", limit " .. tostring(status.limit))
  elseif status.trusted == false and model_ignored(root) then
    warn("no model: the workspace's model is ignored because the workspace is not trusted", {
      "settings.model in setup() sets your own",
      "or, to use the workspace's: " .. REVIEW:format(root),
    })
  else
    warn("no model is set", {
      'model = "provider/name" in .forge.toml or ~/.config/forge-lsp/config.toml, or settings.model in setup()',
    })
  end
  if status.trusted == true then
    ok("the server trusts this workspace (its trust-relevant files as you trusted them)")
  elseif status.trust == "changed" then
    warn("the workspace's files changed since you trusted it (a pull, another program): what needs trust is ignored", {
      "see what changed (git diff, git log -p); " .. REVIEW:format(root),
    })
  elseif status.trusted == false then
    warn("the workspace is not trusted: settings that run code or send data elsewhere are ignored", {
      REVIEW:format(root),
    })
  else
    info("this server does not report trust")
  end
end

--- The MCP servers (forge.mcpServers): ok for each ready or disabled one, an error for each failed one.
local function check_mcp(client)
  if not client then
    info("no forge-lsp runs for this workspace yet: :ForgeMcp starts it and lists the servers")
    return
  end
  local params = { command = "forge.mcpServers", arguments = { vim.empty_dict() } }
  local response = vim.fn.has("nvim-0.11") == 1 and client:request_sync("workspace/executeCommand", params, 15000)
    or client.request_sync("workspace/executeCommand", params, 15000)
  local result = response and response.result
  if type(result) ~= "table" or type(result.servers) ~= "table" then
    warn("forge.mcpServers did not answer: " .. vim.inspect(response and response.err))
    return
  end
  if #result.servers == 0 then
    info("no MCP servers configured")
    return
  end
  for _, server in ipairs(result.servers) do
    local source = mcp.source_text(server.source) and (" (" .. mcp.source_text(server.source) .. ")") or ""
    local line = tostring(server.name) .. ": " .. mcp.state_text(server) .. source
    if server.state == "failed" then
      fail(line, { ":ForgeMcp restart " .. tostring(server.name) .. " once it is mended; the server's log has the details" })
    elseif server.state == "untrusted" then -- the workspace's .mcp.json: listed, never started
      warn(line, { "each .mcp.json server is a program the workspace starts: read .mcp.json before :ForgeTrust" })
    elseif server.state == "ready" or server.state == "disabled" then
      ok(line)
    else
      info(line)
    end
  end
end

function M.check()
  start("forge.nvim")
  check_neovim()
  start("forge-lsp server")
  check_server()
  start("workspace")
  local root, client = check_workspace()
  check_trust(root, client)
  start("MCP servers")
  check_mcp(client)
end

return M
