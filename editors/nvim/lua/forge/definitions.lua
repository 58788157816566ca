-- What :ForgeAgent and :ForgeCommand complete without waiting: the names a running server listed last
-- (asked again in the background), and before it has answered, the names read cheaply from the
-- definition files (Markdown with front matter) in the folders the server reads them from.
local clients = require("forge.client")
local roots = require("forge.roots")

local M = {}

local uv = vim.uv or vim.loop
local MAX_FILES = 200 -- as the server reads at most (frontmatter.py MAX_DEFINITION_FILES)
local FRESH_MS = 2000 -- a list this recent is not asked for again (completion may be asked on every key)

--- The user's folder of kind ("agents", "commands"), as the server finds it: beside $FORGE_LSP_CONFIG,
--- else $XDG_CONFIG_HOME (~/.config)/forge-lsp/kind.
function M.user_dir(kind)
  local file = os.getenv("FORGE_LSP_CONFIG")
  if file and file ~= "" then
    return vim.fn.fnamemodify(file, ":h") .. "/" .. kind
  end
  local base = os.getenv("XDG_CONFIG_HOME")
  if not base or base == "" then
    base = vim.fn.expand("~/.config")
  end
  return base .. "/forge-lsp/" .. kind
end

--- The workspace folder of bufnr: its server's, else the one a :Forge command would start one in.
function M.root(client, bufnr)
  return client and client.config.root_dir
    or roots.find_root(roots.buffer_file(bufnr) or vim.fn.getcwd())
    or vim.fn.getcwd()
end

--- A definition file at a glance (not a YAML parse: the server parses it): { front = whether it begins
--- with front matter, value = that front matter's `key:` line's value, quotes removed, or nil }.
local function glance(path, key)
  local fd = io.open(path, "rb")
  if not fd then
    return { front = false }
  end
  local head = fd:read(4096) or ""
  fd:close()
  local lines = vim.split(head, "\r?\n")
  if lines[1] ~= "---" then
    return { front = false }
  end
  for i = 2, #lines do
    if lines[i] == "---" then
      break
    end
    local value = lines[i]:match("^" .. key .. ":%s*(.-)%s*$")
    if value then
      return { front = true, value = (value:gsub("^([\"'])(.*)%1$", "%2")) }
    end
  end
  return { front = true }
end

--- The *.md files of folder (at most MAX_FILES, by name), each { stem = its name without .md, front,
--- value } (see glance: key is the front matter field that names it, e.g. "id" or "name").
function M.read(folder, key)
  local names = {}
  local handle = uv.fs_scandir(folder)
  while handle and #names < MAX_FILES do
    local name, kind = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    if name:match("%.md$") and kind ~= "directory" then
      table.insert(names, name)
    end
  end
  table.sort(names)
  local files = {}
  for _, name in ipairs(names) do
    local file = glance(folder .. "/" .. name, key)
    file.stem = name:gsub("%.md$", "")
    table.insert(files, file)
  end
  return files
end

--- What running servers listed last, by client: command is the forge.list* to ask, names_of(result)
--- the names in its answer. Returns { get(client), keep(client, result), refresh(client, bufnr), names(from_files), forget(client) }.
function M.listing(command, names_of)
  local listed = {} -- by client id: the names that server listed last
  local asking = {} -- client ids with a request on its way
  local answered_at = {} -- by client id: when (uv.now(), ms) that server listed them
  local self = {}

  function self.get(client)
    return client and listed[client.id]
  end

  function self.keep(client, result)
    listed[client.id], answered_at[client.id] = names_of(result), uv.now()
  end

  --- Ask a running server in the background (one request at a time): the next <Tab> has its names.
  function self.refresh(client, bufnr)
    if not client.initialized or asking[client.id] or uv.now() - (answered_at[client.id] or -FRESH_MS) < FRESH_MS then
      return
    end
    asking[client.id] = true
    local ok = pcall(clients.ask, client, command, nil, function(err, result)
      asking[client.id] = nil
      if not err then
        self.keep(client, result)
      end
    end, bufnr)
    if not ok then
      asking[client.id] = nil
    end
  end

  --- For completion, never waiting: the names the current buffer's server listed last (asked again in the
  --- background), else, before it has answered or started, from_files(the buffer's workspace folder).
  function self.names(from_files)
    local bufnr = vim.api.nvim_get_current_buf()
    local client = clients.get(bufnr)
    local names = self.get(client)
    if client then
      self.refresh(client, bufnr)
    end
    return names or from_files(M.root(client, bufnr))
  end

  --- Forget the server's last list (the workspace was trusted: its own definitions now count) and ask
  --- for it again at once.
  function self.forget(client)
    if client == nil then
      return
    end
    listed[client.id], answered_at[client.id] = nil, nil
    self.refresh(client)
  end

  return self
end

return M
