"""forge-lsp benchmarks. Each figure is printed with a ratio against a baseline measured in the same run.

python bench/run.py            # all of them, and BENCHMARKS.md is rewritten
python bench/run.py --quick    # smaller sizes, for a smoke run (--write: BENCHMARKS.md all the same)
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import hooks_bench  # noqa: E402
import llama_bench  # noqa: E402  (bench/, this script's folder, is on sys.path)
import mcp_bench  # noqa: E402
import nvim_edits_bench  # noqa: E402
import open_documents_bench  # noqa: E402
import redact_bench  # noqa: E402
import verify_bench  # noqa: E402

from support.openai_server import OpenAIStub  # noqa: E402
from support.rawlsp import RawClient, rss_mb  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FORGE = [sys.executable, "-m", "forge_lsp"]
BARE = [sys.executable, str(ROOT / "bench" / "bare_server.py")]
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# The benchmarks' servers are told their workspaces are trusted (as VS Code does), which the server records: in a
# state folder of the run's own, never the user's trust store.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="forge-bench-state-")
for _name in ("FORGE_LSP_WARMUP_DELAY", "FORGE_LSP_PRELOAD"):  # the benchmarks measure the default warm-up
    os.environ.pop(_name, None)

Row = tuple[str, str, str, str, str]
rows: list[Row] = []


def report(name: str, value: str, baseline: str, ratio: float, target: str) -> None:
    rows.append((name, value, baseline, f"{ratio:.2f}×", target))
    print(f"{name}: {value} vs {baseline} -> ratio {ratio:.2f} (target {target})", flush=True)


def workspace(model: str = "scripted/script.json", extra: str = "") -> Path:
    root = Path(tempfile.mkdtemp(prefix="forge-bench-"))
    (root / ".forge.toml").write_text(f'model = "{model}"\n{extra}')
    return root


def cold_start(runs: int) -> None:
    ws = workspace()

    servers = {"forge-lsp": FORGE, "bare pygls": BARE}
    if shutil.which("jedi-language-server"):
        servers["jedi-language-server"] = [shutil.which("jedi-language-server") or ""]
    # As installed from a wheel: byte-compiled (this machine may set PYTHONDONTWRITEBYTECODE).
    compileall.compile_dir(str(ROOT / "server" / "forge_lsp"), quiet=1)
    times: dict[str, list[float]] = {name: [] for name in servers}
    for _ in range(runs):  # interleaved, so that a noisy moment costs every server alike
        for name, cmd in servers.items():
            client = RawClient(cmd, settings={})
            times[name].append(client.initialize(ws))
            client.close()
    results = {name: statistics.median(t) for name, t in times.items()}
    base = results["bare pygls"]
    report(
        "cold start to initialize result",
        f"{results['forge-lsp'] * 1000:.0f} ms",
        f"bare pygls {base * 1000:.0f} ms",
        results["forge-lsp"] / base,
        "≤ 1.3×",
    )
    if "jedi-language-server" in results:
        jedi = results["jedi-language-server"]
        report(
            "cold start vs jedi-language-server",
            f"{results['forge-lsp'] * 1000:.0f} ms",
            f"jedi {jedi * 1000:.0f} ms",
            results["forge-lsp"] / jedi,
            "info",
        )


def litellm_import_rss() -> float:
    """RSS of a bare Python that imported litellm and nothing else (what the library itself holds)."""
    code = "import litellm; print(int(open('/proc/self/statm').read().split()[1]) * 4096 / 1e6)"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def memory() -> None:
    ws = workspace("scripted/echo")
    sizes = {}
    for name, cmd in {"forge-lsp": FORGE, "bare pygls": BARE}.items():
        # The warm-up (litellm at `initialized`) off, to see what the server itself holds idle.
        client = RawClient(cmd, settings={}, env={"FORGE_LSP_WARMUP_DELAY": "off"})
        client.initialize(ws)
        client.notify("initialized", {})
        time.sleep(1.5)
        sizes[name] = rss_mb(client.proc.pid)
        if name == "forge-lsp":
            client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "hi"}]})
            sizes["after a turn"] = rss_mb(client.proc.pid)
        client.close()
    base = sizes["bare pygls"]
    library = statistics.median(litellm_import_rss() for _ in range(3))
    report(
        "idle RSS after initialize (warm-up off: FORGE_LSP_WARMUP_DELAY=off)",
        f"{sizes['forge-lsp']:.1f} MB",
        f"bare pygls {base:.1f} MB",
        sizes["forge-lsp"] / base,
        "≤ 60 MB",
    )
    report(
        "RSS after one turn (litellm loaded)",
        f"{sizes['after a turn']:.1f} MB",
        f"bare pygls {base:.1f} MB",
        sizes["after a turn"] / base,
        "info",
    )
    report(
        "RSS after one turn against what `import litellm` alone holds (tiktoken's tables no longer loaded)",
        f"{sizes['after a turn']:.1f} MB",
        f"python -c 'import litellm' {library:.1f} MB",
        sizes["after a turn"] / library,
        "≤ 1.25×",
    )


def first_model_request(idle_s: float) -> tuple[float, float, float]:
    """A fresh server (default warm-up): seconds from forge.run to the model's HTTP request, idle_s after
    initialized; the same for a second turn on that server (warm); RSS just before the first turn."""
    with OpenAIStub([]) as stub:  # every request answers "done"
        home = Path(tempfile.mkdtemp(prefix="forge-bench-user-"))
        (home / "config.toml").write_text(f'model = "openai/gpt-bench"\napi_base = "{stub.url}"\n')
        ws = Path(tempfile.mkdtemp(prefix="forge-bench-"))
        env = {"FORGE_LSP_CONFIG": str(home / "config.toml"), "OPENAI_API_KEY": "sk-bench"}
        client = RawClient(FORGE, settings={}, env=env)
        client.initialize(ws)
        client.notify("initialized", {})
        time.sleep(idle_s)
        rss = rss_mb(client.proc.pid)
        reached: list[float] = []
        for prompt in ("first", "second"):
            started = time.perf_counter()
            result = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": prompt}]})
            assert result["status"] == "completed", result
            reached.append(stub.requests[-1]["at"] - started)
        client.close()
    return reached[0], reached[1], rss


def import_litellm_secs() -> float:
    """Wall seconds of `python -c 'import litellm'` (a fresh interpreter, the local cost map): the floor of a first
    model request on a fresh server, which must import it."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], check=True, env=env, capture_output=True)
    return time.perf_counter() - started


def first_request(runs: int) -> None:
    for idle, label, target in ((0.0, "immediately after initialize", "< 2 s"), (15.0, "after 15 s idle", "< 1 s")):
        samples = []
        imports = []
        for _ in range(runs):  # interleaved: the machine's load weighs on both alike
            samples.append(first_model_request(idle))
            if not idle:
                imports.append(import_litellm_secs())
        first = statistics.median(s[0] for s in samples)
        warm = statistics.median(s[1] for s in samples)
        if imports:
            floor = statistics.median(imports)
            report(
                "first model request right after initialize, against litellm's import alone",
                f"{first * 1000:.0f} ms",
                f"python -c 'import litellm' {floor * 1000:.0f} ms",
                first / floor,
                "≤ 1.15×",
            )
        report(
            f"first model request on a fresh server, {label} (forge.run to the HTTP request)",
            f"{first * 1000:.0f} ms",
            f"warm server (second turn) {warm * 1000:.0f} ms",
            first / warm,
            target,
        )
        if idle:
            rss = statistics.median(s[2] for s in samples)
            report("RSS after the warm-up (15 s idle, litellm loaded)", f"{rss:.1f} MB", "60 MB idle budget", rss / 60, "info")


def tool_turn_script(ws: Path, calls: int) -> None:
    # The first turn only warms the server up (litellm's import is not the orchestrator's cost).
    responses: list[dict[str, Any]] = [{"text": "warm"}]
    responses += [
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": [{"content": f"step {i}", "status": "completed"}]}}]}
        for i in range(calls)
    ]
    responses.append({"text": "done"})
    (ws / "script.json").write_text(json.dumps({"responses": responses}))


def run_turn(ws: Path, cmd: list[str] = FORGE) -> dict[str, float]:
    client = RawClient(cmd, settings={})
    client.initialize(ws)
    client.notify("initialized", {})
    client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "warm up"}]})
    client.logs.clear()
    result = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "go"}]})
    client.close()
    assert result["status"] == "completed", result
    timing = parse_timing(next(m for m in client.logs if " timing: " in m))
    timing["calls"] = result["toolCalls"]
    timing["requests"] = result["requests"]
    timing["notifications"] = sum(client.notifications.values())
    return timing


def parse_timing(line: str) -> dict[str, float]:
    return {k: float(v) for k, v in (part.split() for part in line.split(" timing: ")[1].split(", "))}


def node_turn(ws: Path) -> dict[str, float] | None:
    """The same turn driven from node by vscode-jsonrpc (VS Code's own protocol library), if installed."""
    node = shutil.which("node")
    if node is None or not (ROOT / "editors" / "vscode" / "node_modules" / "vscode-jsonrpc").is_dir():
        return None
    out = subprocess.run(
        [node, str(ROOT / "bench" / "node_turn.js"), sys.executable, str(ws)], capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    timing = parse_timing(data["timing"])
    timing["calls"] = data["result"]["toolCalls"]
    timing["requests"] = data["result"]["requests"]
    return timing


def orchestrator_overhead(calls: int) -> None:
    clients: list[tuple[str, Callable[[Path], dict[str, float] | None]]] = [
        ("Python client", run_turn),
        ("node vscode-jsonrpc client", node_turn),
    ]
    for name, drive in clients:
        ws = workspace(extra="max_requests_per_turn = 100000\n")
        tool_turn_script(ws, calls)
        t = drive(ws)
        if t is None:
            continue
        per_call = t["overheadMs"] / t["calls"]
        model = t["modelMs"] / t["requests"]
        report(
            f"orchestrator overhead per tool call ({calls} calls through the server, progress + notifications on, {name})",
            f"{per_call:.3f} ms",
            f"scripted litellm request {model:.2f} ms",
            per_call / model,
            "≤ 1 ms per call",
        )


NO_COMPACTION = "[compact]\ntoken_threshold = 0\nmessage_threshold = 0\n"


def history_growth(sizes: list[int], calls: int) -> None:
    from forge_lsp.domain.messages import ChatMessage
    from forge_lsp.state import StateStore

    per: dict[int, tuple[float, float]] = {}
    for size in sizes:
        # The whole history is sent (compaction off): this row measures how cost grows with it.
        ws = workspace(extra="max_requests_per_turn = 100000\n" + NO_COMPACTION)
        store = StateStore(ws)
        cid = store.current_conversation()
        for i in range(size // 2):
            store.append(cid, "old", ChatMessage("user", f"question {i} " + "x" * 200))
            store.append(cid, "old", ChatMessage("assistant", f"answer {i} " + "y" * 200))
        store.close()
        tool_turn_script(ws, calls)
        t = run_turn(ws)
        per[size] = (t["overheadMs"] / t["calls"], t["modelMs"] / t["requests"])
    first = sizes[0]
    for size in sizes:
        overhead, model = per[size]
        report(
            f"per-call cost with {size} messages of history",
            f"overhead {overhead:.3f} ms, model call {model:.2f} ms",
            f"{first} messages: overhead {per[first][0]:.3f} ms, model {per[first][1]:.2f} ms",
            (overhead + model) / sum(per[first]),
            f"linear (≤ {size / first:.0f}× for {size / first:.0f}× history)",
        )


def long_history(size: int) -> list[Any]:
    """A conversation of about ``size`` messages: tool batches (a read and a shell call, their outputs), answers, prompts."""
    from forge_lsp.domain.messages import ChatMessage, ToolCall

    out = [ChatMessage("user", "Start: make the tests pass")]
    i = 0
    while len(out) < size:
        calls = (
            ToolCall(f"c{i}a", "read", json.dumps({"file_path": f"src/m{i}.py"})),
            ToolCall(f"c{i}b", "shell", json.dumps({"command": f"pytest -k t{i}"})),
        )
        out.append(ChatMessage("assistant", f"Step {i}: looking at m{i}", calls))
        out.append(ChatMessage("tool", f"1:import os\n2:def f{i}():\n" + "3:    pass\n" * 40, tool_call_id=f"c{i}a", name="read"))
        out.append(
            ChatMessage(
                "tool", '<shell_output exit_code="0">' + "ok\n" * 20 + "</shell_output>", tool_call_id=f"c{i}b", name="shell"
            )
        )
        if i % 5 == 4:
            out.append(ChatMessage("assistant", f"Done step {i}."))
            out.append(ChatMessage("user", f"Continue with {i + 1}"))
        i += 1
    return out[:size]


def compaction_on_off(size: int, calls: int) -> None:
    """Per-call overhead and request size with ``size`` messages of history, Forge's compaction on vs off (HTTP stub)."""
    from forge_lsp.state import StateStore

    results: dict[str, tuple[float, float, float]] = {}
    for arm, extra in (("off", NO_COMPACTION), ("on", "")):  # on: Forge's defaults (100000 tokens, 200 messages)
        responses: list[dict[str, Any]] = [{"text": "warm"}]
        responses += [
            {"tool": "todo_write", "arguments": json.dumps({"todos": [{"content": f"step {i}", "status": "completed"}]})}
            for i in range(calls)
        ]
        responses.append({"text": "done"})
        with OpenAIStub(responses) as stub:
            ws = workspace("openai/gpt-stub", f'api_base = "{stub.url}"\nmax_requests_per_turn = 100000\n{extra}')
            store = StateStore(ws)
            cid = store.current_conversation()
            for m in long_history(size):
                store.append(cid, "old", m)
            store.close()
            os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0000")
            t = run_turn(ws)
            sent = [len(json.dumps(r["body"]["messages"])) for r in stub.requests[1:]]  # the measured turn's requests
        results[arm] = (t["overheadMs"] / t["calls"], statistics.mean(sent), t["modelMs"] / t["requests"])
    (off_call, off_size, off_model), (on_call, on_size, on_model) = results["off"], results["on"]
    report(
        f"per-call overhead with {size} messages of history, compaction on ({calls} tool calls, loopback HTTP model;"
        " includes the turn's one compaction)",
        f"{on_call:.3f} ms",
        f"compaction off {off_call:.3f} ms",
        on_call / off_call,
        "info",
    )
    report(
        f"per-call cost (overhead + model request) with {size} messages of history, compaction on",
        f"{on_call + on_model:.2f} ms",
        f"compaction off {off_call + off_model:.2f} ms",
        (on_call + on_model) / (off_call + off_model),
        "≤ 1×",
    )
    report(
        f"request size with {size} messages of history, compaction on",
        f"{on_size / 1024:.1f} KiB",
        f"compaction off {off_size / 1024:.1f} KiB",
        on_size / off_size,
        "≪ 1",
    )


def compaction_time(size: int) -> None:
    """One compaction of a ``size``-message conversation (forge.compact's work) vs building its request once."""
    from forge_lsp.core.compaction import Compactor, build_wire
    from forge_lsp.domain.config import CompactConfig
    from forge_lsp.state import StateStore
    from forge_lsp.templates import TemplateEngine

    history = long_history(size)
    ws = workspace()
    engine = TemplateEngine(ws)
    engine.render("forge-partial-summary-frame.md", {"messages": []})  # compiled before the clock starts
    build = statistics.median(timed(lambda: json.dumps(build_wire([], history, []))) for _ in range(5))
    times = []
    for _ in range(5):
        store = StateStore(Path(tempfile.mkdtemp(prefix="forge-bench-")))
        cid = store.current_conversation()
        compactor = Compactor(CompactConfig(), engine, store)
        times.append(timed(lambda: compactor.run(cid, [], history, [], force=True)))  # noqa: B023
        store.close()
    spent = statistics.median(times)
    report(
        f"compaction of {size} messages (forge.compact, deterministic summary)",
        f"{spent * 1000:.1f} ms",
        f"building and serializing the uncompacted request {build * 1000:.1f} ms",
        spent / build,
        "≤ 10× (once, not per request)",
    )


def templates() -> None:
    import pybars  # type: ignore[import-untyped]

    from forge_lsp.domain.template_names import RETRY_MESSAGE
    from forge_lsp.templates import TemplateEngine, builtin_dir, unescape_all

    engine = TemplateEngine()
    ctx = {"attempts_left": 2, "allowed_max_attempts": 3}
    source = unescape_all((builtin_dir() / RETRY_MESSAGE).read_text())
    n = 2000
    once = min(timeit.repeat(lambda: engine.render(RETRY_MESSAGE, ctx), number=n, repeat=3)) / n
    # pybars3's own compile, every time (no cache): what rendering would cost without compile-once.
    every = min(timeit.repeat(lambda: pybars.Compiler().compile(source)(ctx), number=20, repeat=3)) / 20
    report(
        "retry notice render, compiled once",
        f"{once * 1e6:.1f} µs",
        f"compile every time {every * 1e6:.0f} µs",
        once / every,
        "≪ 1",
    )


def search(files: int) -> None:
    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.domain.messages import ToolCall
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.fs_search import rg_binary
    from forge_lsp.tools.registry import ToolRegistry
    from forge_lsp.tools.workspace import Workspace

    root = Path(tempfile.mkdtemp(prefix="forge-bench-tree-"))
    for i in range(files):
        folder = root / f"d{i // 1000:03d}" / f"e{(i // 50) % 20:02d}"
        if i % 50 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        body = f"def f{i}():\n    return {i}\n" + ("# needle here\n" if i % 97 == 0 else "")
        (folder / f"m{i}.py").write_text(body)
    ctx = ToolContext(Workspace(root), ForgeConfig())
    registry = ToolRegistry()
    call = ToolCall("s", "fs_search", json.dumps({"pattern": "needle", "output_mode": "files_with_matches", "head_limit": 1000}))

    def ours() -> None:
        result, _ = asyncio.run(registry.call(call, ctx))
        assert not result.is_error and result.output.count(".py") >= min(1000, files // 97)

    def plain() -> None:
        subprocess.run([rg_binary(), "--files-with-matches", "needle"], cwd=root, capture_output=True, check=True)

    ours()
    plain()
    # Interleaved, and the best of each (timeit's rule): rg's wall time on the shared 2 cores swings 2-3×
    # from one run to the next with the other sessions' load, so five of one then five of the other, or a
    # median, put that noise on one side (1.65× on 2026-12-03, 1.0-3.0× in repeated runs since); the least
    # disturbed run of each is the same (rg's own CPU time is the same too: the tool adds ~1 ms of Python).
    samples: dict[str, list[float]] = {"ours": [], "plain": []}
    for _ in range(11):
        samples["ours"].append(timed(ours))
        samples["plain"].append(timed(plain))
    t_ours = min(samples["ours"])
    t_plain = min(samples["plain"])
    report(
        f"fs_search over {files} files (best of 11, interleaved with rg's)",
        f"{t_ours * 1000:.0f} ms",
        f"plain rg {t_plain * 1000:.0f} ms",
        t_ours / t_plain,
        "≤ 1.5×",
    )
    shutil.rmtree(root, ignore_errors=True)


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


NOTES = [
    "## Where the time and memory go (measured 2026-12-05 and 2026-12-06 for issue 24, same machine)",
    "",
    "- First model request right after `initialize` (issue 24 asks < 2 s under load too: not met). Traced on"
    " 2026-12-06 on the idle machine (load 0.3), from the client's forge.run sent the moment `initialize` was"
    " answered (0.34 s after the process started): the server opens the workspace (55 ms), compiles the templates"
    " (pybars3's import 0.25 s, the templates 0.07 s), imports litellm (1.6 s) and its first request imports ~80"
    " more modules (0.1 s): 2.08 s, each step one core's CPU with no wait between them. litellm's import is the"
    " floor: ~2,500 pydantic models of the openai and litellm types in ~3,000 modules (`openai.types` alone is"
    " 1,072 modules, 0.39 s by `python -X importtime`); deferring pydantic's schema builds saves 3-5%. It may not"
    " start before `initialize` is answered (the cold-start row: a thread importing it would share the GIL with"
    " the answer), and the server has nothing else to do meanwhile, so on 2 cores shared with other work it"
    " takes what the import takes there: 3.6-4.3 s. On the idle machine the row is about 2 s either side: 1.93 s and"
    " 2.13 s (median of 3) in two runs of 2026-12-06. A model process of its own, started with the server, would"
    " take the import off the server's core (~1.5 s on the idle machine by the trace) but not below 2 s on a"
    " core shared two or three ways; it is not done. The tiktoken tables (0.2-0.4 s) are no longer loaded (see"
    " below).",
    "- Cold start: 1.26-1.29× bare pygls on the morning of 2026-12-06 (1.06× the day before): the language server"
    " imported the CLI's commands (core.session and the tools with them) and, for the config-file check, the"
    " agent definitions' PyYAML and template grammar before answering `initialize`. Both now load after the"
    " answer, as the runtime always did (1.07-1.11× in three runs); tests/e2e/test_startup_imports.py reads the"
    " interpreter's import log up to the answer and fails on any of them.",
    "- RSS after one turn: `import litellm` alone holds ~210 MB (tracemalloc of its Python heap, ~150 MB: module"
    " code objects 47 MB, pydantic schemas 21 MB, the model cost map 19 MB, typing/abc/dataclasses 17 MB). litellm"
    " also priced every response as its stream started by counting the prompt with tiktoken, loading cl100k_base"
    " and o200k_base (~41 MB and more, and a whole-history tokenization per request) for a figure forge-lsp does not"
    " use; that count is now Forge's estimate and the tables are never loaded (tests/unit/test_litellm_memory.py)."
    " What stays is litellm itself: the row against `import litellm` alone shows it. Not tokenizing the history"
    " also shows in the model-call rows: with 5000 messages, 11 ms a call against 52 ms on 2026-12-03 (65 ms"
    " against 104 ms with compaction off). The templates and litellm"
    " used to load in two threads at once, which left ~17 MB more resident after the warm-up (malloc arenas: 292 MB"
    " against 237 MB one after the other).",
    "- fs_search over 100,000 files: the 1.65× of 2026-12-03 was the machine, not the tool. rg's CPU time is the"
    " same either way (0.47 s against 0.48 s a search, by getrusage of the children); its wall time on the shared"
    " cores swings 2-3× between runs, so five runs of one then five of the other, or medians, gave anything from"
    " 1.0× to 3.0× in repeated runs, either side slower. The best of 11 interleaved runs is the same for rg alone,"
    " rg with fs_search's flags, environment and session, run_process and the whole tool (240-241 ms each in one"
    " run): the row now reports that.",
    "- MCP rows (issue 26): first written by `python bench/mcp_bench.py --write` on 2026-12-06 at load average "
    "14-17 (seven sessions shared the 2 cores), where the ratios swung between runs: the first turn's extra wait "
    "0.99×, 1.20× and 1.06× (median of 5, 5 and 9 interleaved rounds), a tool call 0.92× to 1.10× over five runs; "
    "on the quiet machine of this run the absolute times are a quarter of those. The extra wait is the servers' startup "
    "and little more: the same three processes start either way, forge-lsp's each under its guard (a `python "
    "-I -S` of ~20 ms idle). A tool call through the tool layer adds the argument check against the server's "
    "schema (jsonschema), the result as text and the clip; it is measured on the same connection as the SDK's "
    "own call.",
    "- Redaction rows (issue 34 item 7): first written by `python bench/redact_bench.py --write` on 2026-12-06 at load "
    "average 8.8 (the shared 2 cores busy). Every text the server sends or keeps passes through the redactor; before "
    'this, its NAME=value pattern retried every suffix of a name that never reached "=", and `redact("x=1\\n" + '
    '"_KEY"*250)` alone took ~88 s. Below about 0.5 MB a text fits the CPU caches and costs half as much a character, '
    "so the linearity row compares 4 MB with 1 MB.",
    "- llama-server prefix row (issue 38): written by `python bench/llama_bench.py --write` on 2026-12-06 at load "
    "average ~10 (another llama-server build and other sessions' tests shared the 2 cores), so its model times are "
    "several times an idle machine's; the token counts are the server's own (prompt_tokens less "
    "prompt_tokens_details.cached_tokens) and do not depend on the load. Before, the workspace's folder and the "
    "date were in the system prompt, ~60 tokens from its start and before the tool definitions: a second "
    "workspace's request diverged from the slot's prompt there and evaluated ~97 % of it again.",
    "- Neovim rows (issue 35): first measured by `python bench/nvim_edits_bench.py` on 2026-12-06 at load "
    "average 8.6 falling to 3.5. The server waits for Neovim's report of an edit (didChange) before it saves the "
    "buffer or edits it again; Neovim 0.7 sends it up to 150 ms after the edit (its debounce, counted from its last "
    "report, so a quick model's next patch waits nearly all of it). The plugin now sends `$/forge/flush` after "
    "applying an edit, which makes 0.7-0.9 send the pending didChange first (0.10+ flush through "
    "`vim.lsp._changetracking`): per patch 0.7 is then as fast as 0.11.",
    "- Verification rows (issue 37 section 1): first written by `python bench/verify_bench.py --write` on 2026-12-06 at "
    "load average ~5 (other sessions' tests on the 2 cores). Neovim 0.7 sends ruff the agent's edit after its 150 ms "
    "didChange debounce, so ruff reports ~120 ms after it, and the server's wait for the editor's answer is that "
    "report and no more (the plugin answers at the first DiagnosticChanged from each language server attached). On "
    "0.11 the save right after the edit makes Neovim pull ruff's diagnostics at once (~4 ms), often before the "
    "server asks: its wait is the request's round trip, and all verification adds to a turn is a few ms a patch "
    "(the two turns compared differ by about that much from run to run).",
    "- First request against litellm's import (issue 36): measured by `bench/run.py`'s first_request alone on "
    "2026-12-06 at load average 8 (three sessions' test suites on the 2 cores), hence the absolute times; the ratio "
    "compares a fresh server's first model request, sent right after `initialized`, with a fresh "
    "`python -c 'import litellm'` interleaved with it (median of 3): the server adds nothing to the import it must "
    "wait for.",
    "- Hook rows (issue 37): written by `python bench/hooks_bench.py --write` on 2026-12-06 at load average "
    "2.9 (other sessions' tests on the 2 cores). A hook runs as the shell tool's commands do: a session of its "
    "own, its exit awaited through a pidfd without reaping it, its process group killed after it, its stdout "
    "and stderr read through the event loop, its process recorded in the state database for the while it runs "
    "(so a restarted server can kill what a dead one left), the open documents looked at before and after it. "
    "That costs about 0.6 ms at best (the fastest of 100 runs: 3.9 ms against 3.3 ms for `cat > /dev/null`), "
    "~0.3 ms of it the state record, and more under load, when each of the event loop's wake-ups waits for a "
    "core; against a hook that does any work (a Python script's start alone is ~25 ms here) it is a few "
    "percent.",
    "",
]


def write_markdown(path: Path, quick: bool, load: tuple[float, float]) -> None:
    command = "python bench/run.py --quick --write" if quick else "python bench/run.py"
    lines = [
        "# Benchmarks",
        "",
        f"Written by `{command}` on {time.strftime('%Y-%m-%d')} ({os.cpu_count()} cores, Python {sys.version.split()[0]};"
        f" load average {load[0]:.1f} at the start, {load[1]:.1f} at the end: the machine is shared).",
        "Every figure is measured against a baseline in the same run (samples of the two interleaved where repeated)."
        " The first-model-request rows run a fresh server with the default warm-up (litellm imported in a background"
        " thread as soon as the server is `initialized`, see FORGE_LSP_WARMUP_DELAY) against the loopback"
        " OpenAI-compatible server; the warm baseline is the second turn on the same server. On a shared machine the"
        " absolute times follow its load: compare the ratios.",
        "",
        "| benchmark | forge-lsp | baseline | ratio | target |",
        "| --- | --- | --- | --- | --- |",
        *(f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows),
        "",
        *NOTES,
    ]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run); BENCHMARKS.md is left alone")
    parser.add_argument("--write", action="store_true", help="with --quick: rewrite BENCHMARKS.md all the same")
    args = parser.parse_args()
    q = args.quick
    load_start = os.getloadavg()[0]
    cold_start(3 if q else 7)
    memory()
    first_request(1 if q else 3)
    templates()
    orchestrator_overhead(100 if q else 1000)
    history_growth([100, 1000] if q else [100, 1000, 5000], 20 if q else 100)
    compaction_on_off(1000 if q else 5000, 20 if q else 100)
    compaction_time(1000 if q else 5000)
    search(2000 if q else 100_000)
    mcp_bench.run(report, q)
    redact_bench.run(report, q)
    llama_bench.run(report)
    nvim_edits_bench.run(report, q)
    open_documents_bench.run(report, q)
    hooks_bench.run(report, q)
    verify_bench.run(report, q)
    if not q or args.write:
        write_markdown(ROOT / "BENCHMARKS.md", q, (load_start, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
