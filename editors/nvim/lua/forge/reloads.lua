-- forge/reloadDocuments: a command of the agent (the shell, an MCP tool) changed a file on disk whose buffer
-- had no unsaved changes; the server asks Neovim to read that buffer again before the agent's next tool call.
-- The buffer then shows what the command left, the server's next patch applies to it, and a later :w gives
-- no "The file has been changed since reading it" warning. `u` takes the reload back ('undoreload').
--
-- A buffer with unsaved changes ('modified'), or changed since the server saw it (a version the server has
-- not been sent), is never read again: the server tells the model and the user instead, and what they typed
-- stays. The reload is Neovim's own (:checktime, 'autoread' for that buffer alone): the language servers
-- attached get didClose + didOpen with the new text, before the answer.
local saves = require("forge.saves")

local M = {}

M.UNSAVED = "it has unsaved changes"

--- Put back the buffer's own 'autoread' (-1: none, the global value applies). `:setlocal ar<` removes the
--- local value on 0.7, `:set ar<` on 0.11.
local function restore_autoread(bufnr, old)
  if old ~= -1 then
    vim.bo[bufnr].autoread = old == 1
    return
  end
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("setlocal autoread<")
    if vim.fn.getbufvar(bufnr, "&l:autoread") ~= -1 then
      vim.cmd("set autoread<")
    end
  end)
end

--- Read bufnr again from its file, as :checktime does for an unmodified buffer with 'autoread'; nil, or why not.
local function read_again(bufnr)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local old = vim.fn.getbufvar(bufnr, "&l:autoread")
  vim.bo[bufnr].autoread = true
  local ok, err = pcall(vim.cmd, "silent checktime " .. bufnr)
  restore_autoread(bufnr, old)
  if ok and vim.api.nvim_buf_get_changedtick(bufnr) == tick then
    -- Neovim saw no change (the file's time and size as it read it: a coarse clock, or a buffer never
    -- read from a file): read it anyway.
    ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
      vim.cmd("silent keepalt keepjumps edit!")
    end)
  end
  if not ok then
    return (tostring(err):gsub("^.-:%s*(E%d+)", "%1"))
  end
  return nil
end

--- One document {uri, version}: {reloaded = true} or {reloaded = false, reason = ...}.
local function reload(doc)
  local path = vim.uri_to_fname(doc.uri)
  local bufnr = vim.fn.bufnr(path)
  if bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr) then
    return { reloaded = false, reason = "it is not open in Neovim" }
  end
  -- 0.11 sets no version until the buffer's first change (its didOpen says 0); 0.7 sets 0 at didOpen.
  local now = vim.lsp.util.buf_versions[bufnr] or 0
  if type(doc.version) == "number" and now ~= doc.version then
    return { reloaded = false, reason = saves.CHANGED_SINCE }
  end
  if vim.bo[bufnr].modified then
    return { reloaded = false, reason = M.UNSAVED }
  end
  if vim.fn.filereadable(path) == 0 then
    return { reloaded = false, reason = "the file is not on disk" }
  end
  local err = read_again(bufnr)
  if err then
    return { reloaded = false, reason = err }
  end
  return { reloaded = true }
end

--- The request handler: one answer per document, in order.
function M.reload_documents(_, params)
  local answers = {}
  for _, doc in ipairs((params or {}).documents or {}) do
    table.insert(answers, reload(doc))
  end
  return answers
end

--- Capabilities: this client reads documents again when the server asks (experimental.forge.reloadDocuments).
function M.capabilities(capabilities)
  capabilities.experimental = type(capabilities.experimental) == "table" and capabilities.experimental or {}
  local forge = type(capabilities.experimental.forge) == "table" and capabilities.experimental.forge or {}
  forge.reloadDocuments = true
  capabilities.experimental.forge = forge
  return capabilities
end

return M
