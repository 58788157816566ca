"""Conversation state in SQLite (.forge/state.sqlite3, WAL): a restarted server resumes.

The state file comes with the workspace, so it is untrusted input: a cloned
repository may carry one. Nothing read from it can make the server signal a
process it did not start on this boot, a file that is not the user's own (or
a symlink) is never opened, and a damaged one is moved aside, never a crash.

The package, one module a subject; each imports the others by their own module path:

- liveness: what /proc says about a process, and may_signal (which recorded process may be signalled)
- dirs: the state folder (.forge/ or the user's), which state file may be opened, move_aside
- db: the schema, opening and checking a state database, how a message is stored
- lock: TurnLock, one turn at a time per workspace across processes
- registry: StateRegistry, the state files this user's forge-lsp created or adopted
- wal: the -wal / -journal beside a state file: ours (recorded) or set aside unread
- store: StateStore, conversations, messages, turns and the reaper

This module only re-exports their public names, so that ``from forge_lsp.state import StateStore``
keeps working. A test that patches a name patches the module that uses it, never this one.
"""

from __future__ import annotations

from forge_lsp.state.db import COLUMNS, OWN_OBJECTS, SCHEMA, DamagedState, RefusedState
from forge_lsp.state.dirs import (
    SIDE_FILES,
    STATE_DIR,
    STATE_FILE,
    UnsafeStateDir,
    ensure_state_dir,
    move_aside,
    stored_state_file,
    user_state_dir,
)
from forge_lsp.state.liveness import BOOT_ID, ancestors, boot_id, cmdline, may_signal, owner, same_command, start_time
from forge_lsp.state.lock import LOCK_FILE, TurnLock
from forge_lsp.state.registry import ID_KEY, MAX_REGISTRY_BYTES, REGISTRY_FILE, StateRegistry, read_state_id, registry_path
from forge_lsp.state.store import INTERRUPTED_RESULT, TITLE_CHARS, Notify, StateStore, title_of

__all__ = [
    "BOOT_ID",
    "COLUMNS",
    "DamagedState",
    "ID_KEY",
    "INTERRUPTED_RESULT",
    "LOCK_FILE",
    "MAX_REGISTRY_BYTES",
    "Notify",
    "OWN_OBJECTS",
    "REGISTRY_FILE",
    "RefusedState",
    "SCHEMA",
    "SIDE_FILES",
    "STATE_DIR",
    "STATE_FILE",
    "StateRegistry",
    "StateStore",
    "TITLE_CHARS",
    "TurnLock",
    "UnsafeStateDir",
    "ancestors",
    "boot_id",
    "cmdline",
    "ensure_state_dir",
    "may_signal",
    "move_aside",
    "owner",
    "read_state_id",
    "registry_path",
    "same_command",
    "start_time",
    "stored_state_file",
    "title_of",
    "user_state_dir",
]
