-- Workspace roots: where a file's workspace begins, and which buffers show files inside one.
local config = require("forge.config")

local M = {}

local uv = vim.uv or vim.loop

--- The nearest folder at or above path holding marker (nil if none).
local function find_marker(dir, marker)
  while dir and dir ~= "" do
    if uv.fs_stat(dir .. "/" .. marker) then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
  return nil
end

--- The workspace root of a path: markers are tried in order (.forge.toml first), each up to /.
function M.find_root(path, markers)
  local dir = vim.fn.fnamemodify(path ~= nil and path ~= "" and path or vim.fn.getcwd(), ":p")
  if vim.fn.isdirectory(dir) == 0 then
    dir = vim.fn.fnamemodify(dir, ":h")
  end
  dir = dir:gsub("/$", "")
  if dir == "" then
    dir = "/"
  end
  for _, marker in ipairs(markers or config.options.root_markers) do
    local root = find_marker(dir, marker)
    if root then
      return root
    end
  end
  return nil
end

--- The file a buffer shows, or nil for the log window, scratch buffers, help, terminals...
function M.buffer_file(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return vim.fn.fnamemodify(name, ":p")
end

function M.inside(path, root)
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

return M
