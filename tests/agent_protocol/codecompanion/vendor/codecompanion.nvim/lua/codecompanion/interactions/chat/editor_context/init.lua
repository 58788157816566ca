-- Re-export from canonical location (moved in v19)
return require("codecompanion.interactions.shared.editor_context")
