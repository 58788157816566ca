"""Model access: the litellm adapter, request-level retry, the scripted model."""
