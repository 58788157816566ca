-- The forge-lsp clients: one per workspace root, started with vim.lsp.start (0.11) or
-- vim.lsp.start_client (0.7), found again from any window; and the server commands sent to them.
local config = require("forge.config")
local events = require("forge.events")
local notify = require("forge.notify").notify
local prompts = require("forge.prompts")
local reloads = require("forge.reloads")
local review = require("forge.review")
local roots = require("forge.roots")
local saves = require("forge.saves")
local trust = require("forge.trust")
local verify = require("forge.verify")

local M = {}

-- Client ids by workspace root: one server per root, found again from any window.
local ids = {}
-- The client of the last :Forge command: the one a command from the log window goes to.
local last_used = nil

local has_011 = vim.fn.has("nvim-0.11") == 1
local levels = vim.log.levels

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- A table that must reach the server as a JSON object even when empty ({} encodes as []).
local function object(t)
  if type(t) ~= "table" or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- The handlers every forge client needs (setup's and lsp/forge.lua's).
M.handlers = {
  ["workspace/applyEdit"] = review.apply_edit,
  ["forge/saveDocuments"] = saves.save_documents,
  ["forge/reloadDocuments"] = reloads.reload_documents,
  ["forge/diagnostics"] = verify.diagnostics,
  ["forge/event"] = events.on_event,
  ["$/progress"] = events.on_progress,
  ["window/showMessageRequest"] = prompts.on_message_request,
  ["window/showMessage"] = prompts.on_show_message,
}

--- before_init: tell the server what Neovim's trust store says (a client fact, like VS Code's isTrusted), and
--- what it covers: .forge.toml's content alone. The server's own fingerprint of every trust-relevant file decides.
function M.before_init(params, lsp_config)
  local options = type(params.initializationOptions) == "table" and params.initializationOptions or {}
  -- Config merging (vim.lsp.config, deepcopy) can turn {} back into a plain table, sent as [].
  options.settings = object(options.settings)
  -- Edits for review (edit_review = "confirm") are shown by this plugin: forge.review.
  params.capabilities = review.capabilities(params.capabilities or vim.lsp.protocol.make_client_capabilities())
  -- The agent's edits reach the disk: the server asks this plugin to save what it edited (forge.saves).
  params.capabilities = saves.capabilities(params.capabilities)
  -- What the agent's commands change on disk reaches its unmodified buffers: the server asks (forge.reloads).
  params.capabilities = reloads.capabilities(params.capabilities)
  -- After each edit of the agent, the server asks for the editor's own diagnostics of the file (forge.verify).
  params.capabilities = verify.capabilities(params.capabilities)
  local hash = lsp_config.root_dir and trust.neovim_trusts(lsp_config.root_dir)
  if hash then
    options.workspaceTrusted = true
    options.workspaceTrustCovers = { [".forge.toml"] = hash }
  end
  -- What the server's messages name to trust a workspace and to set the model: this plugin's.
  options.wording = {
    trust = ":ForgeTrust, or forge-lsp trust DIR",
    modelSetting = config.did_setup and 'settings.model in require("forge").setup()'
      or 'settings.forge.model in vim.lsp.config("forge")',
  }
  params.initializationOptions = options
end

--- on_init of every forge client: its code action requests carry every namespace's diagnostics (forge.actions).
function M.on_init(client)
  require("forge.actions").widen(client)
  -- A line holding the interrupt's Error and a retry's Warning shows the Error's sign, not whichever came
  -- last (Neovim's default, severity_sort off): for forge's diagnostics only.
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, client.id)
  if ok and ns then
    vim.diagnostic.config({ severity_sort = true }, ns)
  end
end

--- The client config for root: vim.lsp.config("forge")'s (0.11, configured that way, no setup()),
--- else setup's options.
local function client_config(root)
  local c
  if not config.did_setup and has_011 and vim.lsp.config and vim.lsp.config.forge then
    -- Configured the 0.11 way (vim.lsp.config("forge", ...)): a command starts what it describes.
    c = vim.deepcopy(vim.lsp.config.forge)
    c.name = "forge"
    c.cmd = config.server_cmd(c.cmd)
  else
    c = {
      name = "forge",
      cmd = config.server_cmd(config.options.cmd),
      init_options = { settings = object(config.server_settings()) },
      settings = { forge = object(config.server_settings()) },
      handlers = M.handlers,
      before_init = M.before_init,
      on_init = M.on_init,
    }
  end
  c.root_dir = root
  c.workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } }
  return c
end

local function alive(id)
  local client = id and vim.lsp.get_client_by_id(id)
  -- is_stopped is a method on 0.11 and a closure that ignores its argument on 0.7: both take (client).
  if client and not (client.is_stopped and client.is_stopped(client)) then
    return client
  end
  return nil
end

--- Every running forge client (started by this plugin or by vim.lsp.enable("forge")).
local function running()
  local found, seen = {}, {}
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get()) do
    if client.name == "forge" and alive(client.id) and client.config.root_dir then
      table.insert(found, client)
      seen[client.id] = true
    end
  end
  for _, id in pairs(ids) do
    local client = alive(id)
    if client and not seen[id] and client.config.root_dir then
      table.insert(found, client)
    end
  end
  return found
end

-- The commands not found, told once each when a file opened would have started them.
local told_missing = {}

--- Whether the config's cmd can run; if not, one line says what to set (Neovim's own words are two lines
--- of "Spawning language server with cmd ... failed" and a hit-enter prompt). quiet: tell it once only
--- (a file opened, not a command the user typed).
local function runnable(c, quiet)
  local cmd = c.cmd
  if type(cmd) ~= "table" or type(cmd[1]) ~= "string" or vim.fn.executable(cmd[1]) == 1 then
    return true -- found, or a function (0.11): Neovim starts it
  end
  if quiet and told_missing[cmd[1]] then
    return false
  end
  told_missing[cmd[1]] = true
  local native = not config.did_setup and has_011 and vim.lsp.config and vim.lsp.config.forge
  local where = native and 'vim.lsp.config("forge")' or "setup()"
  local name = cmd[1]:find("/", 1, true) and vim.fn.fnamemodify(cmd[1], ":~") or cmd[1]
  local say = function()
    notify(string.format("Forge: %s not found: set cmd in %s (:checkhealth forge)", name, where), levels.ERROR)
  end
  if quiet then
    -- From a file's BufReadPost: an error there is "Error detected while processing BufReadPost Autocommands"
    -- and a hit-enter prompt; told once the autocommand is done, it is the one line.
    vim.schedule(say)
  else
    say()
  end
  return false
end

--- The running server for a root, started if needed (one per root); nil and whether the user was told why
--- when it cannot start (quiet: a missing command is told once only).
function M.start(root, quiet)
  for _, client in ipairs(running()) do
    if client.config.root_dir == root then
      return client
    end
  end
  local c = client_config(root)
  if not runnable(c, quiet) then
    return nil, true
  end
  local id
  if has_011 then
    id = vim.lsp.start(c, { attach = false })
  else
    id = vim.lsp.start_client(c)
  end
  ids[root] = id
  return alive(id)
end

--- A running forge client for bufnr, without starting one: the one attached to it, the one whose
--- root holds its file, or (log window, scratch buffers) the last one used.
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local file = roots.buffer_file(bufnr)
  local best, best_len = nil, -1
  local clients = running()
  for _, client in ipairs(clients) do
    local root = client.config.root_dir
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      return client
    end
    if file and roots.inside(file, root) and #root > best_len then
      best, best_len = client, #root
    end
  end
  if best or file then
    return best
  end
  return alive(last_used) or clients[1]
end

local function attach_file(bufnr, client)
  local file = roots.buffer_file(bufnr)
  if file and roots.inside(file, client.config.root_dir) and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Diagnostics a server published for a file before it was loaded (a problem in the user's config.toml):
--- Neovim (0.7 to 0.11) does not draw them when the file is then opened. Drawn on opening it.
function M.show_stored_diagnostics(bufnr)
  for _, client in ipairs(running()) do
    local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, client.id)
    if ok and ns and #vim.diagnostic.get(bufnr, { namespace = ns }) > 0 then
      vim.diagnostic.show(ns, bufnr)
    end
  end
end

--- On opening a file: attach it to the server whose workspace holds it, or start one where a
--- .forge.toml says so. A plain git repository starts nothing until a :Forge command.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local file = roots.buffer_file(bufnr)
  if not file then
    return nil
  end
  local client = M.get(bufnr)
  if not client then
    local root = roots.find_root(file, config.options.autostart_markers)
    if not root then
      return nil
    end
    client = M.start(root, true)
  end
  if client then
    attach_file(bufnr, client)
    return client.id
  end
  return nil
end

--- The client for a :Forge command from bufnr: the running one, or a new one (root: the
--- .forge.toml or .git above the file or the working directory, else the working directory).
function M.for_command(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get(bufnr)
  if not client then
    local root = roots.find_root(roots.buffer_file(bufnr) or vim.fn.getcwd()) or vim.fn.getcwd()
    local told
    client, told = M.start(root)
    if not client then
      if not told then
        notify("Forge: could not start " .. table.concat(client_config(root).cmd, " "), levels.ERROR)
      end
      return nil
    end
  end
  attach_file(bufnr, client)
  last_used = client.id
  return client
end

--- workspace/executeCommand name {arg} to a running client, waiting at most timeout_ms (for a
--- command line completion, which cannot wait on a callback); nil when none runs or no answer came.
function M.execute_sync(name, arg, timeout_ms, bufnr)
  local client = M.get(bufnr)
  if not client then
    return nil
  end
  local params = { command = name, arguments = { object(arg) } }
  local ok, response
  if has_011 then
    ok, response = pcall(client.request_sync, client, "workspace/executeCommand", params, timeout_ms, bufnr or 0)
  else
    ok, response = pcall(client.request_sync, "workspace/executeCommand", params, timeout_ms, bufnr or 0)
  end
  if not ok or type(response) ~= "table" or response.err then
    return nil
  end
  return response.result
end

--- workspace/executeCommand name {arg} to client, in the background and told to nobody:
--- on_answer(err, result) (for what the plugin keeps, e.g. the agents completion offers).
function M.ask(client, name, arg, on_answer, bufnr)
  return request(client, "workspace/executeCommand", { command = name, arguments = { object(arg) } }, on_answer, bufnr)
end

--- Send workspace/executeCommand name {arg} to the client for bufnr; on_result(result, client).
--- An error is told instead. Returns the client (nil when none could start).
function M.execute(name, arg, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.for_command(bufnr)
  if not client then
    return
  end
  request(client, "workspace/executeCommand", { command = name, arguments = { object(arg) } }, function(err, result)
    if err then
      -- Paths inside the workspace relative to it: the point of the message comes before the cut
      -- to one line (the log has it whole).
      local message = tostring(err.message or vim.inspect(err))
      local root = client.config.root_dir
      if root then
        message = message:gsub(vim.pesc(root .. "/"), "")
      end
      if message:sub(1, #name + 2) == name .. ": " then -- the server's message may name the command already
        message = message:sub(#name + 3)
      end
      notify("Forge: " .. name .. ": " .. message, levels.ERROR)
      local detail = type(err.data) == "table" and err.data.detail
      if type(detail) == "string" and detail ~= "" then -- the whole cause, where the message is kept short
        require("forge.log").append("  ! " .. name .. ": " .. detail)
      end
      return
    end
    if on_result then
      on_result(result, client)
    end
  end, bufnr)
  return client
end

return M
