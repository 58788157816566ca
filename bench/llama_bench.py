"""The prompt prefix on a real llama.cpp llama-server (issue 38 item 5), against a baseline measured in the same run.

A new conversation's first request in a second workspace, after one in a first workspace, on one llama-server
(one slot, SmolLM2-135M-Instruct, a chat template with tools): how many of its prompt tokens the server had to
evaluate (prompt_tokens - cached_tokens, as it reports them), against the first workspace's first request, which
evaluated its whole prompt. What never changes comes first in forge-lsp's prompt (the system prompt's fixed part,
then the tool definitions), so the second evaluates only what differs (the workspace's folder and date, the
prompt): the target is at most 25 % of its prompt.

python bench/llama_bench.py [--write]   (needs tests/llama_server/install.sh's build; --write: its row into
BENCHMARKS.md; bench/run.py runs it with the others when llama-server is built)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.llama_server import Build, build, built, start, stop  # noqa: E402

Report = Callable[[str, str, str, float, str], None]
MY_ROWS = ("| first request of a new conversation in a second workspace",)


async def first_request(ws: Path, url: str, prompt: str) -> tuple[Any, float]:
    """The usage of a new conversation's first request in ws, and its model time (ms)."""
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.domain.events import Event, UsageReport

    (ws / ".forge.toml").write_text(f'model = "openai/smollm2"\napi_base = "{url}"\nmax_tokens = 8\nrequest_timeout_secs = 300\n')
    runtime = WorkspaceRuntime(ws, trusted=True)
    events: list[Event] = []
    try:
        summary = await runtime.run(prompt, events.append)
    finally:
        runtime.close()
    usage = next(e.request for e in events if isinstance(e, UsageReport))
    return usage, summary.timing.get("modelMs", 0.0)


def prefix_reuse(report: Report, llama: Build) -> None:
    os.environ.pop("OPENAI_API_KEY", None)
    home = Path(tempfile.mkdtemp(prefix="forge-bench-llama-"))
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")  # no user config of the machine's
    os.environ["XDG_STATE_HOME"] = str(home / "state")
    first, second = home / "alpha-project", home / "beta-service"
    first.mkdir()
    second.mkdir()
    server = start(llama, home / "llama-server.log", ctx=8192, tools_template=True)
    try:
        a, a_ms = asyncio.run(first_request(first, server.url, "What does this project do?"))
        b, b_ms = asyncio.run(first_request(second, server.url, "What does this project do?"))
    finally:
        stop(server)
    a_eval, b_eval = a.prompt_tokens - a.cached_tokens, b.prompt_tokens - b.cached_tokens
    report(
        "first request of a new conversation in a second workspace on llama-server (SmolLM2-135M, one slot): prompt "
        "tokens it evaluated",
        f"{b_eval} of {b.prompt_tokens} ({b_eval / b.prompt_tokens:.0%}; model time {b_ms / 1000:.1f} s)",
        f"the first workspace's first request {a_eval} of {a.prompt_tokens} (model time {a_ms / 1000:.1f} s)",
        b_eval / max(a_eval, 1),
        "≤ 0.25× (≤ 25 % of its prompt)",
    )


def run(report: Report) -> bool:
    """The row, when llama-server is built (False: it is not; tests/llama_server/install.sh builds it)."""
    if not built():
        print("llama-server is not built (tests/llama_server/install.sh): its prefix row is skipped", flush=True)
        return False
    prefix_reuse(report, build())
    return True


def write_rows(path: Path, rows: list[tuple[str, str, str, float, str]]) -> None:
    """Put these rows into BENCHMARKS.md's table in place of the ones an earlier run wrote (after the last row)."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith(MY_ROWS)]
    last = max(i for i, line in enumerate(lines) if line.startswith("| "))
    new = [f"| {a} | {b} | {c} | {d:.2f}× | {e} |" for a, b, c, d, e in rows]
    path.write_text("\n".join([*lines[: last + 1], *new, *lines[last + 1 :]]) + "\n")


def main() -> None:
    rows: list[tuple[str, str, str, float, str]] = []

    def show(name: str, value: str, baseline: str, ratio: float, target: str) -> None:
        rows.append((name, value, baseline, ratio, target))
        print(f"{name}: {value} vs {baseline} -> ratio {ratio:.2f} (target {target})", flush=True)

    load = os.getloadavg()[0]
    if not built():
        build()
    run(show)
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    if "--write" in sys.argv:
        write_rows(ROOT / "BENCHMARKS.md", rows)


if __name__ == "__main__":
    main()
