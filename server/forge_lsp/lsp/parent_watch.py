"""The editor's process, watched (LSP initialize's processId): when it is gone, forge-lsp exits.

The spec says a server whose parent process is not alive should exit. An editor that quits sends
shutdown (and closes the pipe) without waiting, and the end of input normally ends forge-lsp; but a
server still stopping its MCP servers when the pipe closed could stay behind with them (their
guard waits for forge-lsp to die). Once the editor's process is gone, forge-lsp exits after a short
grace for the normal exit: its state is written per transaction, and the guards end the MCP servers.
"""

from __future__ import annotations

import logging
import os
import threading
import time

log = logging.getLogger(__name__)

CHECK_SECS = 1.0
GRACE_SECS = 3.0
"""After the editor is gone, how long the normal exit may take before forge-lsp ends itself."""


def alive(pid: int) -> bool:
    """Whether a process with this id exists (ours to signal or not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _watch(pid: int, check_secs: float, grace_secs: float) -> None:
    while alive(pid):
        time.sleep(check_secs)
    log.info("the editor's process %d is gone: forge-lsp exits within %g s", pid, grace_secs)
    time.sleep(grace_secs)
    log.warning("the editor's process %d is gone and forge-lsp had not exited: exiting now", pid)
    logging.shutdown()
    os._exit(0)


def watch_parent(pid: int | None, check_secs: float = CHECK_SECS, grace_secs: float = GRACE_SECS) -> threading.Thread | None:
    """Exit this process once pid (the editor) is gone; None where there is nothing to watch."""
    if not pid or pid == os.getpid() or not alive(pid):
        return None  # no id, our own, or one this machine does not have (a client elsewhere)
    thread = threading.Thread(target=_watch, args=(pid, check_secs, grace_secs), name="editor-watch", daemon=True)
    thread.start()
    return thread
