-- forge/saveDocuments: after an edit of the agent that landed in a buffer with no unsaved changes, the
-- server asks Neovim to write that buffer, so that the commands the agent runs next (a test, a build) read
-- the edit from the disk, and the buffer is left unmodified: no W11/W12 warning later, and `u` still takes
-- the edit back. Only a buffer still at the version in which the server saw the edit is written: a change
-- typed since is the user's, never saved for them.
--
-- BufWritePre autocommands are skipped (a formatter, LSP willSaveWaitUntil): the agent's text is what lands,
-- so its next patch matches what it wrote; the user's own :w formats as always. BufWritePost ones run
-- (didSave for every language server attached, linters).
local M = {}

M.CHANGED_SINCE = "you changed it since"

--- Write bufnr as the user's :w would, without BufWritePre; nil, or why it could not.
function M.write(bufnr)
  local ignored = vim.o.eventignore
  vim.o.eventignore = ignored == "" and "BufWritePre" or (ignored .. ",BufWritePre")
  -- write!: the buffer held what the disk holds before the edit (the server checked), so a file touched
  -- since without a change of its text must not stop the save with Neovim's "changed since reading it?"
  -- question (asked in the middle of a request, it would wait for a key).
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt keepjumps write!")
  end)
  vim.o.eventignore = ignored
  if not ok then
    local message = tostring(err):gsub("^.-:%s*(E%d+)", "%1")
    return message
  end
  return nil
end

--- One document {uri, version}: {saved = true} or {saved = false, reason = ...}.
local function save(doc)
  local path = vim.uri_to_fname(doc.uri)
  local bufnr = vim.fn.bufnr(path)
  if bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr) then
    return { saved = false, reason = "it is not open in Neovim" }
  end
  local now = rawget(vim.lsp.util.buf_versions, bufnr)
  if type(doc.version) == "number" and now ~= doc.version then
    return { saved = false, reason = M.CHANGED_SINCE }
  end
  -- The user's own say: a read-only buffer or file is not written over (:w! would). A new file is written
  -- where its folder is writable.
  local writable = vim.fn.filewritable(path) == 1
    or (vim.fn.filereadable(path) == 0 and vim.fn.filewritable(vim.fn.fnamemodify(path, ":h")) == 2)
  if vim.bo[bufnr].readonly or not writable then
    return { saved = false, reason = "the buffer or the file is read-only" }
  end
  local err = M.write(bufnr)
  if err then
    return { saved = false, reason = err }
  end
  return { saved = true }
end

--- The request handler: one answer per document, in order.
function M.save_documents(_, params)
  local answers = {}
  for _, doc in ipairs((params or {}).documents or {}) do
    table.insert(answers, save(doc))
  end
  return answers
end

--- Capabilities: this client saves documents when the server asks (experimental.forge.saveDocuments).
function M.capabilities(capabilities)
  capabilities.experimental = type(capabilities.experimental) == "table" and capabilities.experimental or {}
  local forge = type(capabilities.experimental.forge) == "table" and capabilities.experimental.forge or {}
  forge.saveDocuments = true
  capabilities.experimental.forge = forge
  return capabilities
end

return M
