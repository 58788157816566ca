"""A hook's overhead (issue 37 section 4): what a pre_tool hook adds to a tool call, against running the hook's
command directly, measured in the same run.

The hook runs through core/user_hooks.UserHooks.call around a tool call that itself costs nothing: the matcher,
the stdin JSON, the process in a session of its own (pidfd wait, asyncio pipes, the process group killed after
it), the output read, bounded and redacted, the exit code's decision. The baseline is the same command with the
same JSON on stdin run the plain way, `subprocess.run(["bash", "-c", command], input=..., capture_output=True)`.
Two commands: `cat > /dev/null` (a shell that reads its input: the process start is nearly all of it, so the
overhead shows most) and a Claude-Code-style Python script that reads tool_input.file_path. Samples interleaved,
medians compared.

python bench/hooks_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it
with the others)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rows import standalone

Report = Callable[[str, str, str, float, str], None]

SCRIPT = """\
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"].get("file_path", "")
if path.endswith(".env"):
    print(f"Blocked: {path}", file=sys.stderr)
    sys.exit(2)
"""


async def measure(command: str, root: Path, samples: int) -> tuple[float, float, float]:
    """(median ms of a tool call with the hook, median ms of the command run directly, median ratio of the pairs)."""
    from forge_lsp.core.turn import _ContextFollower
    from forge_lsp.core.user_hooks import UserHooks
    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.domain.hooks import Hook
    from forge_lsp.domain.messages import ToolCall, ToolResult
    from forge_lsp.state.store import StateStore
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.process import shell_argv
    from forge_lsp.tools.workspace import Workspace

    hook = Hook("pre_tool", command, ("write",), 30, source="user", path=str(root / "config.toml"), line=1)
    # As a turn of `forge-lsp run` has it: the hook's process recorded in the state (a restarted server kills what
    # a dead one left), the open documents' look before and after it (none open: the disk).
    store = StateStore(root)
    ctx = ToolContext(Workspace(root), ForgeConfig())
    hooks = UserHooks(
        [hook],
        root=root,
        turn_id="bench",
        conversation_id="bench",
        max_stop_blocks=3,
        watch=store.watch_process,
        follower=_ContextFollower(ctx),
    )
    call = ToolCall("call_0", "write", json.dumps({"file_path": "src/app.py", "content": "x = 1\n" * 20}))

    async def tool(c: ToolCall) -> tuple[ToolResult, bool]:
        return ToolResult(c.id, c.name, "Wrote 120 bytes"), False

    def emit(_event: object) -> None:
        raise AssertionError(f"the hook failed: {_event}")

    payload = json.dumps(hooks._tool_payload("pre_tool", call)).encode()
    argv = shell_argv(command)
    with_hook: list[float] = []
    direct: list[float] = []
    ratios: list[float] = []
    for _ in range(3):  # warm: the first run of each pays for imports and page cache
        await hooks.call(call, tool, emit)
        subprocess.run(argv, input=payload, capture_output=True, cwd=root, check=True)  # noqa: ASYNC221 - the baseline
    for _ in range(samples):
        started = time.perf_counter()
        result, _ = await hooks.call(call, tool, emit)
        with_hook.append(time.perf_counter() - started)
        assert not result.is_error, result.output
        started = time.perf_counter()
        subprocess.run(argv, input=payload, capture_output=True, cwd=root, check=True)  # noqa: ASYNC221 - the baseline
        direct.append(time.perf_counter() - started)
        ratios.append(with_hook[-1] / direct[-1])
    store.close()
    # The ratio of each interleaved pair, then their median: a busy moment of the shared machine slows both of a
    # pair alike, where it would move one side's median alone.
    return statistics.median(with_hook) * 1000, statistics.median(direct) * 1000, statistics.median(ratios)


def run(report: Report, quick: bool) -> None:
    samples = 30 if quick else 200
    with tempfile.TemporaryDirectory(prefix="forge-hooks-bench-") as folder:
        root = Path(folder)
        (root / "guard.py").write_text(SCRIPT)
        hooked, plain, ratio = asyncio.run(measure(f"{sys.executable} -S guard.py", root, samples))
        report(
            "a hook's overhead against running its command directly: a tool call with a pre_tool hook running a "
            f"Claude-Code-style Python script (reads tool_input.file_path; median of {samples} interleaved pairs)",
            f"{hooked:.2f} ms",
            f"the script run directly (bash -c, the same JSON on stdin) {plain:.2f} ms",
            ratio,
            "≤ 1.1×",
        )
        hooked, plain, ratio = asyncio.run(measure("cat > /dev/null", root, samples))
        report(
            "a hook's overhead against running its command directly, the least command: `cat > /dev/null` (the fixed "
            f"cost of a hook: process group, state record, output read and redacted; median of {samples} pairs)",
            f"{hooked:.2f} ms (+{hooked - plain:.2f} ms)",
            f"the command run directly {plain:.2f} ms",
            ratio,
            "info",
        )


MY_ROWS = ("| a hook's overhead",)


def main() -> None:
    standalone(run, MY_ROWS)


if __name__ == "__main__":
    main()
