local buf_utils = require("codecompanion.utils.buffers")
local chat_helpers = require("codecompanion.interactions.chat.helpers")

---@class CodeCompanion.Inline.EditorContext.Buffer: CodeCompanion.Inline.EditorContextItems
local Buffer = {}

---@param args CodeCompanion.Inline.EditorContextArgs
function Buffer.new(args)
  return setmetatable({
    context = args.context,
  }, { __index = Buffer })
end

---Fetch and output a buffer's contents
---@return string|nil
function Buffer:output()
  local message = "To help you assist with my user prompt, I'm attaching the contents of a buffer"

  local ok, content, _, _ = pcall(
    chat_helpers.format_buffer_for_llm,
    self.context.bufnr,
    buf_utils.get_info(self.context.bufnr).path,
    { message = message }
  )

  if not ok then
    return
  end

  return content
end

return Buffer
