"""The processes running in a folder: what a test asserts is gone once an editor or agent has quit
(the MCP servers it started run with the workspace as their working directory)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def processes_in(folder: Path) -> list[str]:
    """This user's processes whose working directory is folder (or below), as "PID: command line"."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state == "Z":
            continue  # a zombie: it has exited
        if cwd == str(folder) or cwd.startswith(str(folder) + os.sep):
            found.append(f"{proc.name} (parent {ppid}, {state}): {cmdline}")
    return found


def left_running_in(folder: Path, timeout: float = 5.0) -> list[str]:
    """What still runs in folder after up to timeout seconds (nothing, once it has all stopped)."""
    end = time.monotonic() + timeout
    while (left := processes_in(folder)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def ctrl_c_as_in_a_terminal() -> None:
    """A child's SIGINT as a shell in a terminal leaves it (Popen preexec_fn): a test run started in the background
    (`cmd &`) inherits SIGINT ignored, and a Ctrl-C test would then wait for nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
