-- workspace/applyEdit, and the review of an edit before it lands (edit_review = "confirm"): an edit
-- whose change annotation says needsConfirmation is shown as a diff in the forge://review window and
-- asked about (vim.ui.select): Accept, Reject, or Accept all for this turn. A rejected or dismissed
-- edit is answered applied = false, which the agent is told as "the user rejected the edit".
local events = require("forge.events")
local log = require("forge.log")
local saves = require("forge.saves")
local scratch = require("forge.scratch")

local M = {}

local ACCEPT, REJECT, ACCEPT_ALL = "Accept", "Reject", "Accept all for this turn"
M.CHOICES = { ACCEPT, REJECT, ACCEPT_ALL }
M.WAIT_MS = 30 * 60 * 1000

-- The turn whose edits the user accepted all of.
local accepted_turn = nil

local diff = (vim.text and vim.text.diff) or vim.diff

--- The annotation asking for the user's yes, or nil.
local function confirmation(edit)
  for _, annotation in pairs(edit.changeAnnotations or {}) do
    if type(annotation) == "table" and annotation.needsConfirmation then
      return annotation
    end
  end
  return nil
end

--- The lines of a file as Neovim shows them: its buffer's when loaded, else the disk's (no \r).
local function current_lines(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end
  local path = vim.uri_to_fname(uri)
  if vim.fn.filereadable(path) == 0 then
    return {}
  end
  local lines = vim.fn.readfile(path)
  for i, line in ipairs(lines) do
    lines[i] = line:gsub("\r$", "")
  end
  return lines
end

local function relative(uri)
  return vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
end

--- The edit as a unified diff, file by file: what the user reviews.
function M.diff_lines(edit, encoding)
  local before, after, order, created = {}, {}, {}, {}
  local function track(uri)
    if before[uri] == nil then
      before[uri] = current_lines(uri)
      after[uri] = vim.deepcopy(before[uri])
      table.insert(order, uri)
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    local uri = change.uri or (change.textDocument and change.textDocument.uri)
    if change.kind == "create" then
      before[uri], after[uri], created[uri] = {}, {}, true
      table.insert(order, uri)
    elseif change.kind == "delete" then
      track(uri)
      after[uri] = false
    elseif change.kind == nil and uri then
      track(uri)
      local buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, after[uri] or {})
      vim.lsp.util.apply_text_edits(change.edits or {}, buf, encoding)
      after[uri] = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      vim.api.nvim_buf_delete(buf, { force = true })
      if created[uri] and #after[uri] > 1 and after[uri][#after[uri]] == "" then
        -- Text ending in a newline inserted into a new (one empty line) buffer leaves an empty last line,
        -- which is not in the file (apply() below drops it too).
        table.remove(after[uri])
      end
    end
  end
  local out = {}
  for _, uri in ipairs(order) do
    local name = relative(uri)
    local old = table.concat(before[uri], "\n") .. (#before[uri] > 0 and "\n" or "")
    local new = after[uri] and (table.concat(after[uri], "\n") .. (#after[uri] > 0 and "\n" or "")) or ""
    table.insert(out, "--- " .. (#before[uri] > 0 and ("a/" .. name) or "/dev/null"))
    table.insert(out, "+++ " .. (after[uri] and ("b/" .. name) or "/dev/null"))
    local hunks = diff(old, new, { result_type = "unified", ctxlen = 3 })
    for _, line in ipairs(vim.split(hunks, "\n", { trimempty = true })) do
      table.insert(out, line)
    end
  end
  return out
end

--- Show the diff in forge://review and ask; returns the choice (nil when dismissed or unanswered).
local function ask(edit, title, encoding)
  local buf = scratch.buffer("forge://review", "diff")
  local lines = M.diff_lines(edit, encoding)
  table.insert(lines, 1, title)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  local here = vim.api.nvim_get_current_win()
  local shown = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    shown = shown or vim.api.nvim_win_get_buf(win) == buf
  end
  local win = scratch.show(buf)
  if vim.api.nvim_win_is_valid(here) then
    vim.api.nvim_set_current_win(here)
  end
  vim.cmd("redraw")
  local done, choice = false, nil
  vim.ui.select(M.CHOICES, { prompt = title .. ": apply this edit?", kind = "forge.review" }, function(item)
    done, choice = true, item
  end)
  if not done then -- a picker that answers later: wait for it (timers and the server go on meanwhile)
    vim.wait(M.WAIT_MS, function()
      return done
    end, 50)
  end
  if not shown and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
    vim.api.nvim_win_close(win, true)
  end
  return choice
end

--- Buffers of the files the edit names that Neovim has not loaded (written once the edit lands).
local function unloaded(edit)
  local found = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    local uri = change.kind == nil and change.textDocument and change.textDocument.uri
    if change.kind == "create" then
      found[change.uri] = "created"
    elseif uri and not found[uri] then
      local bufnr = vim.fn.bufnr(vim.uri_to_fname(uri))
      if bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr) then
        found[uri] = true
      end
    end
  end
  return found
end

--- The first edit for a buffer the user changed since the server made it (its version is older than the
--- buffer's), as "file: version N, the buffer is at M", or nil. Neovim's own apply_workspace_edit checks
--- only the first document change, and then skips it with a bare print and no error (0.7 and 0.11): the
--- edit would be answered applied while the user's typing stands in its place.
local function stale(edit)
  for _, change in ipairs(edit.documentChanges or {}) do
    local doc = change.kind == nil and change.textDocument
    local version = doc and type(doc.version) == "number" and doc.version or nil
    if version and version > 0 then
      local bufnr = vim.fn.bufnr(vim.uri_to_fname(doc.uri))
      local now = bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) and rawget(vim.lsp.util.buf_versions, bufnr) or nil
      if now and now > version then
        return string.format("%s: version %d, the buffer is at %d", relative(doc.uri), version, now)
      end
    end
  end
  return nil
end

--- Send the didChange of an applied edit now rather than after the debounce (150 ms): the server waits for
--- it before its next edit or its save of the buffer.
local function flush(client)
  if not client then
    return
  end
  local ok, changetracking = pcall(require, "vim.lsp._changetracking")
  if ok and type(changetracking.flush) == "function" then -- 0.10+
    pcall(changetracking.flush, client)
  elseif type(client.notify) == "function" then
    -- 0.7-0.9 keep their change tracking to themselves, but send what is pending before any other
    -- notification of the client: this one, which the server ignores.
    pcall(client.notify, "$/forge/flush", vim.empty_dict())
  end
end

--- workspace/applyEdit, without Neovim's "Workspace edit" message on every edit (the log has the tool call).
function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or "utf-16"
  local edit = params.edit or {}
  local annotation = confirmation(edit)
  if annotation then
    local title = params.label or annotation.label or "Forge: edit"
    local turn = events.turn_id()
    if #vim.api.nvim_list_uis() == 0 then -- headless: the default select would wait on input nobody types
      log.append("  ? " .. title .. " → not asked (no UI)")
      return { applied = false, failureReason = "Neovim has no UI to review the edit in" }
    end
    if accepted_turn == nil or accepted_turn ~= turn then
      local choice = ask(edit, title, encoding)
      log.append("  ? " .. title .. " → " .. (choice or "no answer (rejected)"))
      if choice ~= ACCEPT and choice ~= ACCEPT_ALL then
        return { applied = false }
      end
      if choice == ACCEPT_ALL then
        accepted_turn = turn
      end
    end
  end
  -- The user typed since the server made the edit (or while reviewing it): nothing is applied, and the
  -- server is told why (an undo of a turn is then refused, naming the file; nothing the user wrote is lost).
  local changed = stale(edit)
  if changed then
    log.append("  ! " .. (params.label or "Forge: edit") .. " not applied: " .. changed)
    flush(client) -- their typing reaches the server before this answer: it makes the edit again on it
    return { applied = false, failureReason = "you changed it since" }
  end
  -- A file the user had not open is written once the edit lands, as the server would have written it.
  local to_write = annotation and unloaded(edit) or {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == "create" then -- Neovim 0.7 creates a file only in a folder that exists
      vim.fn.mkdir(vim.fn.fnamemodify(vim.uri_to_fname(change.uri), ":h"), "p")
    end
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
  if ok then
    for uri in pairs(to_write) do
      local bufnr = vim.fn.bufnr(vim.uri_to_fname(uri))
      if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
        local count = vim.api.nvim_buf_line_count(bufnr)
        local last = vim.api.nvim_buf_get_lines(bufnr, -2, -1, false)[1]
        if to_write[uri] == "created" and count > 1 and last == "" then
          -- Text ending in a newline inserted into a new (one empty line) buffer leaves an empty last line.
          vim.api.nvim_buf_set_lines(bufnr, -2, -1, false, {})
        end
        saves.write(bufnr)
      end
    end
    flush(client)
  end
  return { applied = ok, failureReason = (not ok) and tostring(err) or nil }
end

--- Capabilities: this client shows annotated edits for confirmation (and applies documentChanges).
function M.capabilities(capabilities)
  capabilities.workspace = capabilities.workspace or {}
  local edit = capabilities.workspace.workspaceEdit or {}
  edit.documentChanges = true
  edit.resourceOperations = edit.resourceOperations or { "create", "rename", "delete" }
  edit.changeAnnotationSupport = { groupsOnLabel = false }
  capabilities.workspace.workspaceEdit = edit
  capabilities.workspace.applyEdit = true
  return capabilities
end

return M
