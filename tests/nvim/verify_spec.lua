-- Issue 37 section 1, headless, on the real server, the scripted model and ruff's own language server (`ruff server`,
-- FORGE_RUFF) attached beside forge: after the agent's edit the server asks the plugin for the editor's diagnostics
-- (forge/diagnostics), and ruff's F821 for an undefined name reaches the model in that call's result, forge.run's
-- end (problems) and the end notification; a file not open is loaded without being shown and only its new
-- problems count; with [verify] diagnostics = "fail" the call fails (the retry notice, attempts 2) and the fix clears
-- it; "off" asks nothing; the fix of a problem is seen though a report on the text before it comes late (the stale
-- F821 on Neovim 0.7); a file no language server but forge is attached to, open or not, is answered at once.
-- Neovim 0.7 (ruff started with vim.lsp.start_client on FileType) and 0.11 (vim.lsp.config + vim.lsp.enable). Env as tests/nvim/test_nvim.py's _workspaces (app.py, other.py).
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, wait, script, events, turn, wanted = t.ws, t.wait, t.script, t.events, t.turn, t.wanted
t.deadline(170000)

local has_011 = vim.fn.has("nvim-0.11") == 1
local RUFF = os.getenv("FORGE_RUFF")

-- Every forge/diagnostics request the plugin answers (counted before forge's handlers take the function).
local verify = require("forge.verify")
local asked = {}
local answer = verify.diagnostics
verify.diagnostics = function(err, params, ctx)
  local started = vim.loop.hrtime()
  local result = answer(err, params, ctx)
  table.insert(asked, { params = params, ms = (vim.loop.hrtime() - started) / 1e6 })
  return result
end

-- With late set, ruff's last report on a buffer, when it holds a problem, is given again just after the buffer
-- changes, as from a server that reports in stages or is slow: a report on the text before the edit that fixed the
-- problem then comes after that edit is in the buffer (on Neovim 0.7, before ruff has even had the edit).
local late = false
local last_report = {}
local handlers = {
  ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
    last_report[result.uri] = { err, result, ctx, config }
    vim.lsp.handlers["textDocument/publishDiagnostics"](err, result, ctx, config)
  end,
}
local function report_late(buf)
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      local report = late and last_report[vim.uri_from_bufnr(buf)]
      if report and #report[2].diagnostics > 0 then
        vim.schedule(function()
          vim.lsp.handlers["textDocument/publishDiagnostics"](unpack(report, 1, 4))
        end)
      end
    end,
  })
end

vim.cmd("filetype on")
if has_011 then
  vim.lsp.config("ruff", { cmd = { RUFF, "server" }, filetypes = { "python" }, root_markers = { ".forge.toml" }, handlers = handlers })
  vim.lsp.enable("ruff")
else
  local ruff_id
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "python",
    callback = function(args)
      ruff_id = ruff_id or vim.lsp.start_client({ name = "ruff", cmd = { RUFF, "server" }, root_dir = ws, handlers = handlers })
      vim.lsp.buf_attach_client(args.buf, ruff_id)
    end,
  })
end

t.setup()

local APP = { "import os", "", "print(os.name)" }
local CALC = { "def mul(a, b):", "    return a * b" }

local function patch(path, old, new)
  return { tool_calls = { { name = "patch", arguments = { file_path = path, old_string = old, new_string = new } } } }
end

local function since(kind, from)
  local found = {}
  for i = from + 1, #events do
    if events[i].type == kind then
      table.insert(found, events[i])
    end
  end
  return found
end

local function ruff_client(buf)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(get()) do
    if c.name == "ruff" and vim.lsp.buf_is_attached(buf, c.id) then
      return c
    end
  end
  return nil
end

--- app.py opened as on disk, forge and ruff attached, ruff's first report in.
local function open_app()
  vim.cmd("silent! %bwipeout!")
  vim.fn.writefile(APP, ws .. "/app.py")
  vim.cmd("edit " .. ws .. "/app.py")
  local buf = vim.api.nvim_get_current_buf()
  t.wait_server()
  wait(30000, "ruff did not attach to app.py", function()
    return ruff_client(buf) ~= nil
  end)
  vim.wait(1000) -- ruff's report on the opened file
  return buf
end

--- The client's settings as the user changes them (client.config.settings, then didChangeConfiguration), and the
--- server's effective [verify] diagnostics once it has them.
local function set_mode(mode)
  local client = require("forge").get_client()
  client.config.settings = vim.tbl_deep_extend("force", client.config.settings or {}, { forge = { verify = { diagnostics = mode } } })
  local params = { settings = client.config.settings }
  if has_011 then
    client:notify("workspace/didChangeConfiguration", params)
  else
    client.notify("workspace/didChangeConfiguration", params)
  end
  wait(10000, "the server did not take diagnostics = " .. mode, function()
    local shown = t.answer(5000, "no showConfig", function(done)
      require("forge.client").ask(client, "forge.showConfig", {}, function(_, result)
        done(result or false)
      end)
    end)
    return type(shown) == "table" and type(shown["verify.diagnostics"]) == "table" and shown["verify.diagnostics"].value == mode
  end)
end

vim.schedule(function()
  local ok, err = pcall(function()
    -- The undefined name's F821 from ruff reaches the model, forge.run's end, the notification and the log.
    if wanted("report") then
      open_app()
      script({ patch("app.py", "print(os.name)", "print(undefined_name)"), { text = "Done." } })
      local from, notes, n = #events, #t.notes, #asked
      local finished = turn("ForgeRun use the undefined name")
      local output = since("toolCallFinished", from)[1].output
      assert(output:find("app.py:3:7: error Ruff F821: Undefined name `undefined_name`", 1, true), output)
      assert(finished.summary.failures == 0 and finished.problems.count == 1, vim.inspect(finished))
      assert(finished.summary.problems.files[1].path == "app.py", vim.inspect(finished.summary))
      local checked = since("problems", from)[1]
      assert(checked.caughtUp and checked.count == 1 and checked.waitedMs < 2000, vim.inspect(checked))
      assert(#t.notes_with("Forge: turn completed; 1 new problem in app.py (", notes) == 1, vim.inspect(t.notes))
      -- Asked twice: before the edit (at once: the open buffer), after it (once ruff reported).
      assert(#asked == n + 2 and asked[n + 1].params.waitMs == 0 and asked[n + 2].params.waitMs == 2000, vim.inspect(asked))
      local log = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
      assert(log:find("⚠ editor: 1 new problem in app.py", 1, true), log)
      t.out("OK report: " .. string.format("%.0f ms", asked[n + 2].ms))
    end

    -- A file not open: loaded without being shown; the problem it had is not new, the one the edit adds is.
    if wanted("hidden") then
      open_app()
      local path = ws .. "/other.py"
      assert(vim.fn.bufloaded(path) == 0, "other.py is loaded already")
      script({ patch("other.py", "y = 2", "y = other_undefined"), { text = "Done." } })
      local from = #events
      local finished = turn("ForgeRun edit other.py")
      local output = since("toolCallFinished", from)[1].output
      assert(output:find("other.py:2:5: error Ruff F821: Undefined name `other_undefined`", 1, true), output)
      assert(not output:find("`x_undefined`", 1, true), output)
      assert(finished.problems.count == 1, vim.inspect(finished.problems))
      -- Loaded only while it was checked: left loaded, the agent's next write of it would go into a hidden buffer.
      assert(vim.fn.bufloaded(path) == 0, "other.py was left loaded after the check")
      assert(table.concat(vim.fn.readfile(path), "|") == "x = x_undefined|y = other_undefined")
      t.out("OK hidden")
    end

    -- "fail": the call with the new error fails (the retry notice, attempts 2), the edit stays, the fix clears it.
    if wanted("fail") then
      local buf = open_app()
      set_mode("fail")
      script({
        patch("app.py", "print(os.name)", "print(undefined_name)"),
        patch("app.py", "print(undefined_name)", "print(os.sep)"),
        { text = "Fixed." },
      })
      local from, notes = #events, #t.notes
      local finished = turn("ForgeRun break it and fix it")
      local retry = since("retry", from)[1]
      assert(retry and retry.tool == "patch" and retry.attemptsLeft == 2, vim.inspect(since("retry", from)))
      local failed, fixed = since("toolCallFinished", from)[1], since("toolCallFinished", from)[2]
      assert(not failed.ok and failed.output:find("Ruff F821", 1, true), failed.output)
      assert(fixed.ok and fixed.output:find("no longer reports", 1, true), fixed.output)
      assert(finished.summary.failures == 1 and finished.problems == nil, vim.inspect(finished))
      assert(#t.notes_with("Forge: turn completed (", notes) == 1, vim.inspect(t.notes))
      assert(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "|") == "import os||print(os.sep)")
      t.out("OK fail")
    end

    -- "off": nothing asked, no wait, the result as the tool gave it.
    if wanted("off") then
      open_app()
      set_mode("off")
      script({ patch("app.py", "print(os.name)", "print(undefined_name)"), { text = "Done." } })
      local from, n = #events, #asked
      local finished = turn("ForgeRun off")
      assert(#asked == n and #since("problems", from) == 0 and finished.problems == nil, vim.inspect(asked))
      assert(since("toolCallFinished", from)[1].output == "Patched app.py: 1 replacement(s)")
      t.out("OK off")
    end

    -- The fix of a problem the agent's edit made is seen in the buffer open in the editor: the answer waits for
    -- ruff's report on THIS edit (Neovim 0.7 sends didChange 150 ms after it), never the previous edit's F821.
    if wanted("stale") then
      late = true
      for _, mode in ipairs({ "report", "fail" }) do
        vim.cmd("silent! %bwipeout!")
        vim.fn.writefile(CALC, ws .. "/calc.py")
        vim.cmd("edit " .. ws .. "/calc.py")
        local buf = vim.api.nvim_get_current_buf()
        report_late(buf)
        t.wait_server()
        wait(30000, "ruff did not attach to calc.py", function()
          return ruff_client(buf) ~= nil
        end)
        vim.wait(1000) -- ruff's report on the opened file
        set_mode(mode)
        script({
          patch("calc.py", "return a * b", "return a * undefined_b"),
          patch("calc.py", "return a * undefined_b", "return a * b  # ok"),
          { text = "Fixed." },
        })
        local from, notes, n = #events, #t.notes, #asked
        local finished = turn("ForgeRun break calc.py and fix it (" .. mode .. ")")
        local broke, fixed = since("toolCallFinished", from)[1], since("toolCallFinished", from)[2]
        assert(broke.output:find("calc.py:2:16: error Ruff F821: Undefined name `undefined_b`", 1, true), broke.output)
        assert(broke.ok == (mode == "report"), mode .. ": " .. vim.inspect(broke))
        assert(fixed.ok and fixed.output:find("no longer reports", 1, true), mode .. ": " .. fixed.output)
        assert(not fixed.output:find("F821", 1, true), mode .. ": " .. fixed.output)
        assert(finished.problems == nil, mode .. ": " .. vim.inspect(finished))
        assert(#t.notes_with("Forge: turn completed (", notes) == 1, mode .. ": " .. vim.inspect(t.notes))
        assert(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "|") == "def mul(a, b):|    return a * b  # ok")
        -- Each answer after an edit waited for ruff's report on it (and no longer than that).
        for i = n + 1, #asked do
          if asked[i].params.waitMs > 0 then
            assert(asked[i].ms < 1500, mode .. ": " .. vim.inspect(asked))
          end
        end
        t.out(string.format("OK stale %s: %.0f ms", mode, asked[#asked].ms))
      end
      late = false
    end

    -- A file no language server but forge is attached to (a text file, open or not) is answered at once.
    if wanted("plain") then
      open_app()
      set_mode("report")
      for _, shown in ipairs({ false, true }) do
        local path = ws .. "/NOTES.txt"
        vim.fn.writefile({ "first note" }, path)
        if shown then
          vim.cmd("edit " .. path)
          local buf = vim.api.nvim_get_current_buf()
          wait(10000, "forge did not attach to NOTES.txt", function()
            return vim.lsp.buf_is_attached(buf, require("forge").get_client().id)
          end)
        else
          assert(vim.fn.bufloaded(path) == 0, "NOTES.txt is loaded already")
        end
        script({ patch("NOTES.txt", "first note", "second note"), { text = "Done." } })
        local from, n = #events, #asked
        local finished = turn("ForgeRun edit NOTES.txt")
        assert(since("toolCallFinished", from)[1].ok, vim.inspect(since("toolCallFinished", from)))
        assert(finished.problems == nil, vim.inspect(finished))
        assert(#asked > n, "forge/diagnostics was not asked for NOTES.txt")
        for i = n + 1, #asked do
          assert(asked[i].ms < 500, (shown and "open: " or "not open: ") .. vim.inspect(asked))
        end
        local log = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
        assert(not log:find("NOTES.txt %(%d+ ms, its language servers had not reported yet%)"), log)
        t.out(string.format("OK plain %s: %.0f ms", shown and "open" or "not open", asked[#asked].ms))
      end
    end
  end)
  t.finish(ok, err)
end)
