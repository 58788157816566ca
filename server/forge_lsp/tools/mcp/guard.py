"""A stdio MCP server runs under a small guard, so that none outlives forge-lsp, even after kill -9.

The SDK starts the guard in a new process group (start_new_session); the guard starts the server in
that group, with the same stdin, stdout and stderr, and exits with its status. When forge-lsp is
gone (its parent id changes: a kill -9, a crash) or the guard is told to stop (SIGTERM, the SDK's
shutdown), the whole group is killed. Only the standard library; `python -I -S` starts in ~20 ms.
"""

from __future__ import annotations

import os
import sys

GUARD = r"""
import os, signal, subprocess, sys, threading, time
parent = int(sys.argv[1])
def end(*_):
    try:
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(137)
signal.signal(signal.SIGTERM, end)
signal.signal(signal.SIGHUP, end)
if os.getppid() != parent:
    end()
try:
    child = subprocess.Popen(sys.argv[2:])
except OSError as exc:
    sys.stderr.write("cannot start %s: %s\n" % (sys.argv[2], exc.strerror or exc))
    sys.exit(127)
def watch():
    while os.getppid() == parent:
        time.sleep(0.2)
    end()
threading.Thread(target=watch, daemon=True).start()
code = child.wait()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
try:
    os.killpg(0, signal.SIGTERM)
except OSError:
    pass
sys.exit(code if code >= 0 else 128 - code)
"""


def guarded(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command and args that run command under the guard (parent: this process)."""
    return sys.executable, ["-I", "-S", "-c", GUARD, str(os.getpid()), command, *args]
