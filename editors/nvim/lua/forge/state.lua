-- What the plugin remembers between events and commands: one table that its parts share.
return { status = "idle", turn_id = nil, last_result = nil, events = {}, log_buf = nil, client_id = nil }
