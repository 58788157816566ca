"""Redaction benchmarks (issue 34 item 7), each against a baseline measured in the same run.

Every text the server sends or keeps (model replies, tool output, prompts, events, logs) passes through
forge_lsp.redact.redact, so its cost must follow the text's length whatever the text holds.

1. 1 MB of ordinary text (this project's own source, which has NAME=value lines, URLs and "sk-"
   in it) against one pass over the same text that touches every character (json.dumps).
2. 1 MB of text made to be slow (issue 34: lines of "_KEY" repeated, names that never reach "=",
   unclosed quotes, key prefixes that never complete, URL fragments) against the ordinary 1 MB of row 1.
3. The same adversarial text at 4 MB against four times its 1 MB: 1.0 is linear (a quadratic redactor
   would give 4). Below ~0.5 MB the text fits the CPU's caches and each character costs half as much,
   so the sizes compared are both above that.

python bench/redact_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it
with the others)
"""

from __future__ import annotations

import json
import timeit
from collections.abc import Callable
from pathlib import Path

from rows import standalone

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000

Report = Callable[[str, str, str, float, str], None]


def ordinary(size: int) -> str:
    source = "".join(p.read_text() for p in sorted((ROOT / "server" / "forge_lsp").rglob("*.py")))
    return (source * (size // len(source) + 1))[:size]


def adversarial(size: int) -> str:
    """size characters of blocks of 100 KB made to slow the redactor (each block the same)."""
    pieces = [
        ("x=1\n" + "_KEY" * 250 + "\n") * 12,  # the line: a credential-like name that never reaches "="
        "A_KEY= " * 2_000,  # names with nothing after "="
        ('DB_PASS="' + "b" * 40 + "\n") * 300,  # quotes never closed
        "sk-" * 3_000 + "ghp_" * 2_500 + "github_pat_" * 600 + "AKIA" * 2_500,  # key prefixes never completed
        "://a:" * 2_000 + "://" + "b" * 10_000,  # URL credentials never ending in "@"
    ]
    block = "".join(pieces)
    assert len(block) <= MB // 10
    return block * (size // len(block)) + block[: size % len(block)]


def best(fn: Callable[[], object], repeat: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def run(report: Report, quick: bool) -> None:
    from forge_lsp.redact import redact

    repeat = 3 if quick else 9
    plain, hostile = ordinary(MB), adversarial(MB)
    large = adversarial(4 * MB)
    redact(plain[:10_000], [])  # patterns compiled, the environment's secrets read
    # Interleaved: a noisy moment on the shared machine costs each side alike.
    t_plain = t_dumps = t_hostile = t_large = float("inf")
    for _ in range(repeat):
        t_plain = min(t_plain, best(lambda: redact(plain, []), 1))
        t_dumps = min(t_dumps, best(lambda: json.dumps(plain), 1))
        t_hostile = min(t_hostile, best(lambda: redact(hostile, []), 1))
        t_large = min(t_large, best(lambda: redact(large, []), 1))
    report(
        "redaction of 1 MB of ordinary text (this project's source; best of interleaved runs)",
        f"{t_plain * 1000:.1f} ms",
        f"json.dumps of the same text {t_dumps * 1000:.1f} ms",
        t_plain / t_dumps,
        "≤ 50 ms",
    )
    report(
        '1 MB of text made to slow the redactor ("_KEY" lines, names without values, unclosed quotes, key prefixes,'
        " URL fragments)",
        f"{t_hostile * 1000:.1f} ms",
        f"1 MB of ordinary text {t_plain * 1000:.1f} ms",
        t_hostile / t_plain,
        "≤ 50 ms",
    )
    report(
        "the same adversarial text: 4 MB against four times 1 MB (linear: 1; quadratic: 4)",
        f"{t_large * 1000:.1f} ms",
        f"4 × {t_hostile * 1000:.1f} ms",
        t_large / (4 * t_hostile),
        "≤ 1.5×",
    )


MY_ROWS = ("| redaction of 1 MB", "| 1 MB of text made to slow the redactor", "| the same adversarial text")


def main() -> None:
    standalone(run, MY_ROWS)


if __name__ == "__main__":
    main()
