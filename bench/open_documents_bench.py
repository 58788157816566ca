"""The look at the editor's open documents around a call that may change any file (issue 35), against the
cheapest such call measured in the same run.

Before a shell or MCP call the server notes each open document of the workspace (a stat, and whether its
text is the disk's: read only when the document or the file changed since it was last compared), and
after it stats each again (lsp/outside_changes.py). Measured in-process on 50 open documents of 12 KB that
nothing changes (the usual case), against the shell tool running `true` (a process started and waited
for), interleaved; the median.

python bench/open_documents_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it
with the others)
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from rows import standalone

ROOT = Path(__file__).resolve().parents[1]

Report = Callable[[str, str, str, float, str], None]


async def _measure(rounds: int, documents: int) -> tuple[float, float]:
    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.lsp.document_changes import DocumentChanges
    from forge_lsp.lsp.outside_changes import OutsideChanges
    from forge_lsp.tools import shell
    from forge_lsp.tools.base import ToolContext
    from forge_lsp.tools.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="forge-open-documents-bench-") as folder:
        root = Path(folder).resolve()
        docs = {}
        for i in range(documents):
            path = root / f"module_{i}.py"
            text = "value = 1\n" * 1200
            path.write_text(text)
            docs[path.as_uri()] = SimpleNamespace(source=text, version=1)
        server = SimpleNamespace(
            workspace=SimpleNamespace(text_documents=docs), client_capabilities=None, document_changes=DocumentChanges()
        )

        async def view_text(path: Path) -> str:
            return str(docs[path.as_uri()].source)

        outside = OutsideChanges(SimpleNamespace(server=server, root=root, view_text=view_text))  # type: ignore[arg-type]
        ctx = ToolContext(Workspace(root), ForgeConfig())
        await outside.after(await outside.before(), "shell")  # the first look reads each file once
        looks: list[float] = []
        calls: list[float] = []
        for _ in range(rounds):
            start = time.perf_counter()
            await outside.after(await outside.before(), "shell")
            looks.append(time.perf_counter() - start)
            start = time.perf_counter()
            await shell.TOOL.run({"command": "true"}, ctx)
            calls.append(time.perf_counter() - start)
        return statistics.median(looks), statistics.median(calls)


def run(report: Report, quick: bool) -> None:
    documents = 50
    look, call = asyncio.run(_measure(20 if quick else 200, documents))
    report(
        f"the look at {documents} open documents around a shell or MCP call that changes none of them (before + after; median)",
        f"{look * 1000:.2f} ms",
        f"the shell tool running `true` {call * 1000:.2f} ms",
        look / call,
        "≤ 0.5×",
    )


MY_ROWS = ("| the look at 50 open documents",)


def main() -> None:
    standalone(run, MY_ROWS)


if __name__ == "__main__":
    main()
