"""llama.cpp's llama-server for the real local-server tier (tests/llama_server) and the prefix-cache bench: the build
install.sh made (once, cached outside the repository) and a server started on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

INSTALL = Path(__file__).resolve().parents[1] / "llama_server" / "install.sh"
ENV = "FORGE_LLAMA_SERVER"
TOOLS_TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
"""A ChatML template with tools (SmolLM2 speaks ChatML; its own template has no tools)."""
BUILD_TIMEOUT_S = 3600


@dataclass(frozen=True)
class Build:
    """Where install.sh put llama-server, the model and llama.cpp's chat templates."""

    server: Path
    model: Path
    templates: Path


def built() -> bool:
    """Whether install.sh has built llama-server (builds nothing)."""
    return subprocess.run(["bash", str(INSTALL), "--check"], check=False).returncode == 0


def build() -> Build:
    """Build llama-server if it is not built (waiting for a build under way), and where it is; RuntimeError naming
    the build's last lines when it fails."""
    done = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"tests/llama_server/install.sh failed:\n{done.stderr[-4000:]}")
    printed = subprocess.run(["bash", str(INSTALL), "--print"], capture_output=True, text=True, check=True).stdout
    paths = dict(line.split("=", 1) for line in printed.splitlines() if "=" in line)
    return Build(Path(paths["server"]), Path(paths["model"]), Path(paths["templates"]))


def strict() -> bool:
    """CI (or FORGE_STRICT): nothing may be skipped for a missing build."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false") or os.environ.get("FORGE_STRICT", "") not in ("", "0")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LlamaServer:
    """One running llama-server; url is its OpenAI-compatible base (…/v1)."""

    process: subprocess.Popen[bytes]
    root: str
    log: Path
    ctx: int

    @property
    def url(self) -> str:
        return f"{self.root}/v1"


def start(build: Build, log: Path, *, ctx: int, tools_template: bool) -> LlamaServer:
    """llama-server on a free loopback port, ready (its /health answers 200), or a failure with its log."""
    port = free_port()
    argv = [
        str(build.server),
        "--model",
        str(build.model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--ctx-size",
        str(ctx),
        "--parallel",
        "1",
        "--threads",
        # One where the tier runs beside other work (.ci/test: FORGE_LLAMA_THREADS=1): two threads meet at a barrier
        # after every step, and one that waits there for the other, preempted, spins (a third more CPU beside real
        # VS Code). Alone, two are done sooner.
        os.environ.get("FORGE_LLAMA_THREADS", "2"),
        # Its threads sleep while they wait for work instead of spinning (the default, --poll 50): beside other
        # work (.ci/test runs this tier beside real VS Code) a spinning thread burns the core the other needs.
        "--poll",
        "0",
        "--jinja",
    ]
    if tools_template:
        argv += ["--chat-template-file", str(build.templates / TOOLS_TEMPLATE)]
    out = log.open("wb")
    process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LlamaServer(process, f"http://127.0.0.1:{port}", log, ctx)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"llama-server exited ({process.returncode}):\n{log.read_text(errors='replace')[-4000:]}")
        try:
            with urllib.request.urlopen(f"{server.root}/health", timeout=2) as response:  # noqa: S310 (loopback)
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    stop(server)
    raise AssertionError(f"llama-server did not answer /health in 120 s:\n{log.read_text(errors='replace')[-4000:]}")


def stop(server: LlamaServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(15)
