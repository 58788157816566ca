-- Re-export from shared module
return require("codecompanion.interactions.shared.slash_commands.file")
