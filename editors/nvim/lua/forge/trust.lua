-- Neovim's own trust store (vim.secure.trust, 0.9+) and a workspace's .forge.toml: what it says,
-- and recording a trust given with :ForgeTrust there too.
local M = {}

local uv = vim.uv or vim.loop

--- What Neovim's own trust store (vim.secure.trust, 0.9+) says of root's .forge.toml: true or nil.
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
      found = true
    end
  end
  trust:close()
  return found
end

--- Neovim's own trust store learns it too (0.9+), so the next start says so at once.
function M.remember(root)
  if root and vim.secure and vim.secure.trust and uv.fs_stat(root .. "/.forge.toml") then
    pcall(vim.secure.trust, { action = "allow", path = root .. "/.forge.toml" })
  end
end

return M
