-- Issue 37 section 3 in Neovim: a model that makes the same call again and again (each time a success, its
-- arguments reformatted) is interrupted at max_repeated_calls_per_turn as by the failure limit: told once with the
-- reason, an Error of its own code on the transcript, the call not run in :ForgeLog as such; :ForgeContinue goes on.
-- Env as forge_spec.lua. Prints PASS/FAIL; exits 0 on success.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "support.lua")
local ws, script = t.ws, t.script
t.deadline(100000)

local forge = t.setup({ reply = "none" })

local function write_as(arguments)
  return { tool_calls = { { name = "write", arguments = arguments } } }
end

local ok, err = xpcall(function()
  vim.cmd("edit " .. ws .. "/main.py")
  t.wait_server()
  -- One write as a model may format it, six times: key order and spacing differ, the call does not.
  local same = { file_path = "notes.md", content = "# Notes\n", overwrite = true }
  script({
    write_as(same),
    write_as('{ "file_path" : "notes.md", "content" : "# Notes\\n", "overwrite" : true }'),
    write_as('{"overwrite":true,"content":"# Notes\\n","file_path":"notes.md"}'),
    write_as(same),
    write_as('{\n  "file_path": "notes.md",\n  "content": "# Notes\\n",\n  "overwrite": true\n}'),
    write_as(same),
    { text = "never asked" },
  })
  local result = t.answer(60000, "no interrupted result", function(done)
    forge.run("write the notes", nil, done)
  end)
  assert(result.status == "interrupted", "status " .. tostring(result.status))
  assert(result.reason.kind == "MaxRepeatedCallsReached" and result.reason.limit == 6, vim.inspect(result.reason))
  assert(result.reason.tool == "write", vim.inspect(result.reason))
  t.wait(5000, "interrupt not told", function()
    return t.count_notes("Repeated call limit (6)") >= 1
  end)
  vim.wait(300)
  assert(t.count_notes("Repeated call limit (6)") == 1, "interrupt told more than once")
  assert(forge.statusline():find("interrupted"), forge.statusline())
  local transcript = ws .. "/.forge/transcripts/" .. result.turnId .. ".md"
  local tbuf = vim.uri_to_bufnr(vim.uri_from_fname(transcript))
  t.wait(5000, "no Error on the transcript", function()
    return #vim.diagnostic.get(tbuf, { severity = vim.diagnostic.severity.ERROR }) == 1
  end)
  local error = vim.diagnostic.get(tbuf, { severity = vim.diagnostic.severity.ERROR })[1]
  assert(error.code == "max-repeated-calls-per-turn" and error.source == "forge", vim.inspect(error))
  local log = table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("forge://log"), 0, -1, false), "\n")
  assert(select(2, log:gsub("  ✓ write\n", "")) == 5, log)
  local stopped = "  ⊘ write not run: the same write call was made 6 times in a row, the limit "
    .. "(max_repeated_calls_per_turn), and the turn was interrupted\n"
  assert(log:find(stopped, 1, true), log)
  assert(not log:find("✗ write", 1, true), log)
  -- Continue: a new turn in the same conversation, with a fresh count.
  script({ { text = "The notes are written." } })
  local finished = t.turn("ForgeContinue")
  assert(finished.status == "completed", vim.inspect(finished))
  assert(forge.statusline():find("^Forge: idle"), forge.statusline())
end, debug.traceback)

t.finish(ok, err)
