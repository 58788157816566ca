-- Neovim's own trust store (vim.secure.trust, 0.9+) and a workspace's .forge.toml: what it says (for that one
-- file only), and recording a trust given with :ForgeTrust there too.
local M = {}

local uv = vim.uv or vim.loop

--- What Neovim's own trust store (vim.secure.trust, 0.9+) says of root's .forge.toml: the sha256 of the content
--- it lists (the file is that now), or nil. It covers that one file: the server trusts no more on its word
--- (initializationOptions.workspaceTrustCovers; a .mcp.json, .forge/ or a script asks the server's own question).
function M.neovim_trusts(root)
  if not (vim.secure and vim.fn.has("nvim-0.9") == 1) then
    return nil
  end
  local file = root .. "/.forge.toml"
  local fd = io.open(file, "rb")
  if not fd then
    return nil
  end
  local contents = fd:read("*a")
  fd:close()
  local trust = io.open(vim.fn.stdpath("state") .. "/trust", "r")
  if not trust then
    return nil
  end
  local hash = vim.fn.sha256(contents)
  local real = uv.fs_realpath(file) or file
  local found = nil
  for line in trust:lines() do
    local h, path = line:match("^(%S+) (.+)$")
    if path == real and h == hash then
      found = hash
    end
  end
  trust:close()
  return found
end

--- Neovim's own trust store learns it too (0.9+), so the next start says so at once.
--- vim.secure.trust allows a buffer only ("path" is refused with action "allow"): the file is read
--- into a hidden buffer of its own, without autocommands (no filetype, no LSP attach), then wiped.
function M.remember(root)
  local path = root and (root .. "/.forge.toml")
  if not (path and vim.secure and vim.secure.trust and uv.fs_stat(path)) then
    return
  end
  local buf = vim.fn.bufnr(path)
  local ours = buf == -1 or not vim.api.nvim_buf_is_loaded(buf)
  if ours then
    buf = buf == -1 and vim.fn.bufadd(path) or buf
    vim.cmd("noautocmd call bufload(" .. buf .. ")")
  end
  local ok, err = pcall(vim.secure.trust, { action = "allow", bufnr = buf })
  if ours then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
  if not ok then
    require("forge.log").append("Neovim's trust store did not record " .. path .. ": " .. tostring(err))
  end
end

return M
