"""The tools the model can call, confined to the workspace."""
