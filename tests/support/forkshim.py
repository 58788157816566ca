"""The process a test starts in place of `python -m forge_lsp ARGS` (support/forkserver.py says why).

Run as `python -I -S forkshim.py SOCKET PYTHON ARGS...`: it hands its stdin, stdout and stderr, its arguments,
environment and working directory to the fork server at SOCKET, which forks a server from its loaded copy. It
then stands for that server: signals sent to it are passed on, and it exits as the server exited (its code, or
the same signal). Where no fork server answers, it becomes `PYTHON -m forge_lsp ARGS` itself (exec).

Only the standard library, and no site packages: it must start in a few milliseconds.
"""

import json
import os
import signal
import socket
import struct
import sys


def main() -> None:
    sock_path, python, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    request = {
        "argv": args,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "sigint_ignored": signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
    }
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(sock_path)
        body = json.dumps(request).encode()
        socket.send_fds(conn, [struct.pack("!I", len(body)) + body], [0, 1, 2])
        pid = struct.unpack("!i", read_exactly(conn, 4))[0]
    except OSError:
        conn.close()
        os.execv(python, [python, "-m", "forge_lsp", *args])
    # The server has its own copies now: a reader of our stdout sees its end when the server's copy closes.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    try:
        status = struct.unpack("!i", read_exactly(conn, 4))[0]
    except OSError:
        status = -signal.SIGKILL
    if status < 0:  # ended by a signal: end by the same one
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        status = 128 - status
    os._exit(status)


def read_exactly(conn: socket.socket, n: int) -> bytes:
    """n bytes from conn (the fork server's side reads the shim's request with it too)."""
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the other end went away")
        data += chunk
    return data


if __name__ == "__main__":
    main()
