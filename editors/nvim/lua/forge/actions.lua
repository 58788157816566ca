-- Code actions (:ForgeFix, and the standard vim.lsp.buf.code_action() / `gra`, whose requests to forge-lsp
-- get the diagnostics of every namespace: a linter's, another server's, the compiler's, not only the server's
-- own that Neovim 0.8+ sends); and the client-side commands the server's actions name: forge.run (a turn, through this plugin) and
-- forge.editSelection (asks for an instruction with vim.ui.input, then a turn on the selection).
local clients = require("forge.client")
local notify = require("forge.notify").notify

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- A vim.diagnostic as an LSP Diagnostic (0-based lines; Neovim's byte columns).
local function to_lsp(d)
  local lsp = d.user_data and d.user_data.lsp or {}
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    severity = d.severity,
    message = d.message,
    source = d.source,
    code = d.code or lsp.code,
    data = lsp.data,
  }
end

--- The buffer's diagnostics on lines first..last (0-based), from every namespace, as LSP Diagnostics.
function M.diagnostics(bufnr, first, last)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.lnum <= last and (d.end_lnum or d.lnum) >= first then
      table.insert(found, to_lsp(d))
    end
  end
  return found
end

--- Whether two LSP Diagnostics are the same one (the server's own, and the copy of it every namespace gives).
local function same(a, b)
  local ra, rb = a.range or {}, b.range or {}
  local sa, sb = ra.start or {}, rb.start or {}
  return a.message == b.message and a.source == b.source and sa.line == sb.line and sa.character == sb.character
end

--- params of a textDocument/codeAction request with the diagnostics of every namespace on its lines added to
--- context.diagnostics (a copy: Neovim 0.11 gives every client the same context table).
function M.with_every_namespace(params, bufnr)
  if type(params) ~= "table" or type(params.range) ~= "table" or type(params.textDocument) ~= "table" then
    return params
  end
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.uri_to_bufnr(params.textDocument.uri)
  end
  local context = vim.tbl_extend("force", {}, type(params.context) == "table" and params.context or {})
  local have = type(context.diagnostics) == "table" and context.diagnostics or {}
  local all = vim.list_extend({}, have)
  for _, d in ipairs(M.diagnostics(bufnr, params.range.start.line, params.range["end"].line)) do
    local known = false
    for _, h in ipairs(all) do
      known = known or same(h, d)
    end
    if not known then
      table.insert(all, d)
    end
  end
  context.diagnostics = all
  return vim.tbl_extend("force", params, { context = context })
end

--- The standard code action key (vim.lsp.buf.code_action(), `gra` on 0.11) offers "Forge: Fix" for any source's
--- diagnostic: Neovim 0.8+ sends a server only its own diagnostics in the request's context, so the forge client's
--- textDocument/codeAction requests get the diagnostics of every namespace on the requested lines added.
function M.widen(client)
  if not client or client.forge_widened then
    return
  end
  client.forge_widened = true
  local request = client.request
  client.request = function(first, ...)
    if first == client then -- client:request(method, params, handler, bufnr) (0.11)
      local method, params, handler, bufnr = ...
      if method == "textDocument/codeAction" then
        params = M.with_every_namespace(params, bufnr)
      end
      return request(client, method, params, handler, bufnr)
    end
    local params, handler, bufnr = ... -- client.request(method, params, handler, bufnr) (0.7 to 0.10)
    if first == "textDocument/codeAction" then
      params = M.with_every_namespace(params, bufnr)
    end
    return request(first, params, handler, bufnr)
  end
end

--- Whether one of diagnostics is another source's (a Fix is offered for it): Forge's own (a failed tool
--- call, a config problem) get none, as the server's code actions say (lsp/code_actions.py is_own).
local function has_fixable(diagnostics)
  for _, d in ipairs(diagnostics) do
    local source = type(d.source) == "string" and d.source or ""
    if vim.trim(d.message or "") ~= "" and source ~= "forge" and source:sub(1, 6) ~= "forge." then
      return true
    end
  end
  return false
end

--- :ForgeFix: the code actions for the cursor's line (opts.range: the lines line1..line2 selected),
--- with every namespace's diagnostics there: "Forge: Fix ...", and on a selection "Forge: Explain" and
--- "Forge: Edit selection…" (and other servers' actions for the same diagnostics).
function M.code_action(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  if not clients.for_command(bufnr) then
    return
  end
  local context
  if opts.range and opts.range > 0 then
    local first, last = opts.line1 - 1, opts.line2 - 1
    local last_text = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or ""
    context = { diagnostics = M.diagnostics(bufnr, first, last) }
    local start_pos, end_pos = { opts.line1, 0 }, { opts.line2, math.max(#last_text - 1, 0) }
    if has_011 then
      vim.lsp.buf.code_action({ context = context, range = { start = start_pos, ["end"] = end_pos } })
    else
      vim.lsp.buf.range_code_action(context, start_pos, end_pos)
    end
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  context = { diagnostics = M.diagnostics(bufnr, line, line) }
  if not has_fixable(context.diagnostics) then
    -- Forge offers nothing here: say so in its words rather than Neovim's bare "No code actions available".
    notify("Forge: no diagnostic here; select lines (Explain/Edit) or :ForgeRun") -- fits 80 columns (v:echospace 68)
    return
  end
  if has_011 then
    vim.lsp.buf.code_action({ context = context })
  else
    vim.lsp.buf.code_action(context)
  end
end

local function buffer_of(arg, ctx)
  if type(arg) == "table" and type(arg.uri) == "string" then
    return vim.uri_to_bufnr(arg.uri)
  end
  return ctx and ctx.bufnr or vim.api.nvim_get_current_buf()
end

--- The commands a Forge code action names, run by this plugin (progress, errors, Continue as :ForgeRun).
function M.register()
  local commands = require("forge.commands")
  vim.lsp.commands["forge.run"] = function(command, ctx)
    local arg = (command.arguments or {})[1]
    commands.run_arg(arg, buffer_of(arg, ctx))
  end
  vim.lsp.commands["forge.editSelection"] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    local bufnr = buffer_of(arg, ctx)
    vim.ui.input({ prompt = "Forge: edit the selection how? " }, function(input)
      if input and vim.trim(input) ~= "" then
        commands.run_arg({ prompt = "Edit the selected code: " .. input, uri = arg.uri, range = arg.range }, bufnr)
      end
    end)
  end
end

return M
