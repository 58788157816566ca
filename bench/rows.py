"""What every standalone bench script shares: its rows printed as measured, and put into BENCHMARKS.md's table
(--write) in place of the ones an earlier run of it wrote."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

Row = tuple[str, str, str, float, str]
"""(benchmark, forge-lsp's figure, the baseline's, their ratio, the target)"""

Report = Callable[[str, str, str, float, str], None]

BENCHMARKS = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def write_rows(path: Path, rows: list[Row], mine: tuple[str, ...]) -> None:
    """Put these rows into BENCHMARKS.md's table in place of the ones starting with mine (after the last row)."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith(mine)]
    last = max(i for i, line in enumerate(lines) if line.startswith("| "))
    new = [f"| {a} | {b} | {c} | {d:.2f}× | {e} |" for a, b, c, d, e in rows]
    path.write_text("\n".join([*lines[: last + 1], *new, *lines[last + 1 :]]) + "\n")


def standalone(run: Callable[[Report, bool], None], mine: tuple[str, ...]) -> list[Row]:
    """A bench script's main: run(report, quick) with --quick from the command line, each row printed, the load
    average said, and its rows written to BENCHMARKS.md with --write."""
    rows: list[Row] = []

    def show(name: str, value: str, baseline: str, ratio: float, target: str) -> None:
        rows.append((name, value, baseline, ratio, target))
        print(f"{name}: {value} vs {baseline} -> ratio {ratio:.2f} (target {target})", flush=True)

    load = os.getloadavg()[0]
    run(show, "--quick" in sys.argv)
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    if "--write" in sys.argv:
        write_rows(BENCHMARKS, rows, mine)
    return rows
