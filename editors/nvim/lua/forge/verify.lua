-- forge/diagnostics: after an edit of the agent, the server asks for the editor's own diagnostics of the file (every
-- namespace's: the language servers attached, linters; never forge's), once they caught up with the edit, and the
-- model reads the new problems in that call's result ([verify] in the server's config; :help forge-verify).
--
-- "Caught up": a DiagnosticChanged came for the buffer about the version in which the server saw the edit (or a
-- later one: the version a report names, else the buffer's when it came), from each language server attached to it
-- (or none more for a moment); with none attached but forge, nothing to wait for, even for a buffer loaded for the
-- check (a language server that takes the file has attached as it loaded). Most language servers report after
-- every change (ruff): they are waited for. One seen to say nothing after an edit gets a quiet period (twice the
-- slowest of its last report times, once a few are known): it had nothing new to say. waitMs bounds it all. A file
-- that is not loaded is loaded without being shown (an unlisted buffer, no swap file), so its language servers see
-- it, and their first report is waited for.
local M = {}

local uv = vim.uv or vim.loop
local has_010 = vim.fn.has("nvim-0.10") == 1
local has_011 = vim.fn.has("nvim-0.11") == 1

M.SETTLE_MS = 100 -- none more for this long after a report: several servers' reports are in
M.QUIET_FLOOR_MS = 300 -- the least quiet period
M.SAMPLES = 5 -- report times kept per filetype
M.LEARNT_AFTER = 3 -- a quiet period shorter than waitMs needs this many of them
M.MAX_WAIT_MS = 60000

-- Per buffer, the diagnostics changes seen (not forge's), the latest last: { at = ms, version = n }.
local changes = {}
-- Per buffer, what its forge and other namespaces held at the last change (to tell a change of forge's alone).
local held = {}
-- Per filetype, how long its language servers took to report after an edit (the last few times), and whether they
-- ever said nothing within a wait (most report after every change: ruff; one that does not gets a quiet period).
local latency = {}
local silent = {}
-- Buffers this module loaded (for :checkhealth and the log), by number.
M.loaded = {}

local function now_ms()
  return uv.hrtime() / 1e6
end

local function version(bufnr)
  return vim.lsp.util.buf_versions[bufnr] or 0
end

--- Whether a namespace is one of forge's own clients' (vim.lsp.forge.<id>, and .<id>.<pull id> on 0.10+).
local forge_namespaces = {}
local function is_forge(ns)
  if forge_namespaces[ns] == nil then
    local name
    for n, id in pairs(vim.api.nvim_get_namespaces()) do
      if id == ns then
        name = n
      end
    end
    forge_namespaces[ns] = name ~= nil and name:find("^vim%.lsp%.forge%.%d") ~= nil
  end
  return forge_namespaces[ns]
end

--- A buffer's diagnostics, forge's and the others', each as one string (what changed, and whose).
local function signatures(bufnr)
  local mine, others = {}, {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local line = table.concat({ d.namespace or 0, d.lnum or 0, d.col or 0, d.severity or 0, tostring(d.code), d.message or "" }, ":")
    table.insert(is_forge(d.namespace) and mine or others, line)
  end
  return table.concat(mine, "\n"), table.concat(others, "\n")
end

-- The publishDiagnostics being handled now, while its DiagnosticChanged runs: the document version it is about
-- (false: its server gave none).
local publishing = nil

--- vim.lsp.handlers' publishDiagnostics, wrapped to tell on_changed which version of the text a report is about. On
--- Neovim 0.7 the text reaches the other language servers 150 ms after an edit (didChange's debounce), so a report
--- on the text before it (one the server sent twice, or late) can arrive after the edit is in the buffer: counted
--- at the buffer's version, it answered for the edit at once, with the problems the edit had just fixed.
local wrapped_publish
local function wrap_publish()
  local method = "textDocument/publishDiagnostics"
  local original = vim.lsp.handlers[method]
  if type(original) ~= "function" or original == wrapped_publish then
    return
  end
  wrapped_publish = function(err, result, ctx, config)
    local outer = publishing
    publishing = type(result) == "table" and type(result.version) == "number" and result.version or false
    local ok, out = pcall(original, err, result, ctx, config)
    publishing = outer
    if not ok then
      error(out, 0)
    end
    return out
  end
  vim.lsp.handlers[method] = wrapped_publish
end

local function on_changed(args)
  local bufnr = args.buf
  if not vim.api.nvim_buf_is_valid(bufnr) then
    changes[bufnr], held[bufnr] = nil, nil
    return
  end
  local mine, others = signatures(bufnr)
  local before = held[bufnr] or {}
  held[bufnr] = { mine = mine, others = others }
  -- Forge's own diagnostics (a failed call's Warning) changing alone is no report of a language server. A report
  -- that repeats what they said (most send one after every change) is one.
  if before.mine ~= nil and mine ~= before.mine and others == before.others then
    return
  end
  local list = changes[bufnr] or {}
  -- A report says which text it is about when its server gives the version; else it is taken as on the text now.
  local about = version(bufnr)
  if publishing then
    about = math.min(about, publishing)
  end
  table.insert(list, { at = now_ms(), version = about })
  if #list > 20 then
    table.remove(list, 1)
  end
  changes[bufnr] = list
end

local group
--- Start watching diagnostics (setup, a client's before_init and each request call it; the autocommands once).
function M.watch()
  wrap_publish() -- again at each request: a user's config may set the handler after setup
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("forge-verify", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = on_changed })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
    group = group,
    callback = function(args)
      changes[args.buf], held[args.buf] = nil, nil
    end,
  })
end

--- The language server clients attached to bufnr but forge's.
local function others(bufnr)
  local found = 0
  local clients = has_010 and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name ~= "forge" then
      found = found + 1
    end
  end
  return found
end

--- Neovim 0.10+ pulls a language server's diagnostics (textDocument/diagnostic: ruff, and others) only for buffers
--- shown in a window: for one that is not, they are asked here, answered through Neovim's own handler.
local function pull(bufnr)
  if not has_010 or #vim.fn.win_findbuf(bufnr) > 0 then
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    -- 0.11's client methods take self; 0.10's are closures.
    local supports = has_011 and client:supports_method("textDocument/diagnostic", bufnr)
      or (not has_011 and client.supports_method("textDocument/diagnostic"))
    if client.name ~= "forge" and supports then
      local handler = client.handlers["textDocument/diagnostic"] or vim.lsp.handlers["textDocument/diagnostic"]
      local params = { textDocument = { uri = uri } }
      if has_011 then
        client:request("textDocument/diagnostic", params, handler, bufnr)
      else
        client.request("textDocument/diagnostic", params, handler, bufnr)
      end
    end
  end
end

--- The buffer of a URI, loaded without being shown when it is not (its language servers then see it); nil when
--- the file is not there. Also whether it was loaded now.
local function buffer(uri)
  local path = vim.uri_to_fname(uri)
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    if M.loaded[bufnr] and #vim.fn.win_findbuf(bufnr) == 0 then
      vim.bo[bufnr].buflisted = false -- Neovim lists a buffer the agent's edit went to: still one the user never opened
    end
    return bufnr, false
  end
  if vim.fn.filereadable(path) == 0 then
    return nil, false
  end
  bufnr = vim.fn.bufadd(path)
  vim.bo[bufnr].buflisted = false
  -- No swap file: a hidden buffer must never stop at an ATTENTION question. Its autocommands run (filetype,
  -- BufReadPost: every language server that takes the file attaches, forge too).
  local ok, err = pcall(vim.cmd, "noswapfile silent call bufload(" .. bufnr .. ")")
  if not ok then
    require("forge.log").append("  ! forge/diagnostics: could not load " .. path .. ": " .. tostring(err))
    return nil, false
  end
  vim.bo[bufnr].buflisted = false -- loading it listed it again
  M.loaded[bufnr] = true
  return bufnr, true
end

--- The changes of bufnr from version on (or, for a buffer loaded now, since it was loaded).
local function since(p)
  local found = {}
  for _, c in ipairs(changes[p.bufnr] or {}) do
    if (p.loaded_now and c.at >= p.asked) or (not p.loaded_now and c.version >= p.version) then
      table.insert(found, c)
    end
  end
  return found
end

--- Whether p's diagnostics are current (see the module's comment), at time t.
local function current(p, t)
  local found = since(p)
  local servers = others(p.bufnr)
  if #found > 0 then
    return #found >= servers or t - found[#found].at >= M.SETTLE_MS
  end
  if servers == 0 then
    -- No language server for this file but forge (one that attaches as a hidden buffer loads has done so by now):
    -- what the editor has is all there is.
    return true
  end
  local ft = vim.bo[p.bufnr].filetype
  local times = latency[ft] or {}
  local quiet = silent[ft] and #times >= M.LEARNT_AFTER and math.max(M.QUIET_FLOOR_MS, 2 * math.max((table.unpack or unpack)(times)))
    or nil
  -- A quiet period as long as the wait is the wait running out: not caught up.
  return quiet ~= nil and quiet < p.wait and t - p.asked >= quiet
end

--- A vim.diagnostic entry as an LSP Diagnostic.
local function as_lsp(d)
  return {
    range = {
      start = { line = d.lnum or 0, character = d.col or 0 },
      ["end"] = { line = d.end_lnum or d.lnum or 0, character = d.end_col or d.col or 0 },
    },
    severity = d.severity,
    source = d.source,
    code = d.code,
    message = d.message,
  }
end

local function answer(p, caught_up)
  local out = {}
  if p.bufnr then
    for _, d in ipairs(vim.diagnostic.get(p.bufnr)) do
      if not is_forge(d.namespace) and type(d.message) == "string" then
        table.insert(out, as_lsp(d))
      end
    end
  end
  return { uri = p.uri, diagnostics = out, caughtUp = caught_up }
end

--- The request handler: one answer per document, in order, once each is current (at most waitMs).
function M.diagnostics(_, params)
  M.watch()
  params = type(params) == "table" and params or {}
  local wait = math.min(math.max(tonumber(params.waitMs) or 0, 0), M.MAX_WAIT_MS)
  local asked = now_ms()
  local pending = {}
  for _, doc in ipairs(type(params.documents) == "table" and params.documents or {}) do
    local bufnr, loaded_now = nil, false
    if type(doc.uri) == "string" and doc.uri:find("^file:") then
      bufnr, loaded_now = buffer(doc.uri)
    end
    local v = type(doc.version) == "number" and doc.version or (bufnr and version(bufnr)) or 0
    if bufnr and not loaded_now then
      -- The edit is in the buffer already; the server may not have had its didChange yet (Neovim's debounce).
      v = math.max(v, version(bufnr))
    end
    if bufnr and wait > 0 then
      pull(bufnr)
    end
    table.insert(pending, { uri = doc.uri, bufnr = bufnr, version = v, loaded_now = loaded_now, asked = asked, wait = wait })
  end
  local function all_current()
    local t = now_ms()
    for _, p in ipairs(pending) do
      if p.bufnr and not p.done then
        if not current(p, t) then
          return false
        end
        p.done = true
        local took = #since(p) > 0 and (since(p)[1].at - p.asked) or nil
        local ft = vim.bo[p.bufnr].filetype
        if took and ft ~= "" then
          local times = latency[ft] or {}
          table.insert(times, took)
          if #times > M.SAMPLES then
            table.remove(times, 1)
          end
          latency[ft] = times
        end
      end
    end
    return true
  end
  if wait > 0 and not all_current() then
    vim.wait(wait, all_current, 5)
  end
  for _, p in ipairs(pending) do
    if p.bufnr and not p.done and #since(p) == 0 and vim.api.nvim_buf_is_valid(p.bufnr) then
      silent[vim.bo[p.bufnr].filetype] = true -- its language servers said nothing within the wait
    end
  end
  local answers = {}
  for _, p in ipairs(pending) do
    -- Not caught up: the wait ran out first (what the editor has then is the answer).
    table.insert(answers, answer(p, p.done == true or wait == 0 or p.bufnr == nil))
  end
  for _, p in ipairs(pending) do
    -- A buffer loaded for this answer goes again once it is given (its language servers get didClose): kept, it
    -- was an open document to the server, so the agent's next write of the file went into that hidden buffer
    -- instead of the disk, and one the file was deleted under stayed there as "unsaved changes of yours".
    if p.loaded_now and vim.api.nvim_buf_is_valid(p.bufnr) and #vim.fn.win_findbuf(p.bufnr) == 0 then
      M.loaded[p.bufnr] = nil
      pcall(vim.api.nvim_buf_delete, p.bufnr, { force = true })
    end
  end
  return answers
end

--- Capabilities: this client answers forge/diagnostics (experimental.forge.diagnostics).
function M.capabilities(capabilities)
  M.watch()
  capabilities.experimental = type(capabilities.experimental) == "table" and capabilities.experimental or {}
  local forge = type(capabilities.experimental.forge) == "table" and capabilities.experimental.forge or {}
  forge.diagnostics = true
  capabilities.experimental.forge = forge
  return capabilities
end

return M
