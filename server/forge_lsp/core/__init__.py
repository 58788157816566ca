"""What every frontend drives: the workspace runtime, its sessions, the orchestrator and its hooks."""
