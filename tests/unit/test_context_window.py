"""A model's context window, once known, drives compaction (issue 38 item 6: compaction waited for 100,000 tokens with
an 8,192-token model)."""

from __future__ import annotations

from pathlib import Path

from forge_lsp.core.compaction import WINDOW_SHARE, window_threshold

from fakes import FakeModel, Harness, answer, call, tools


class WindowModel(FakeModel):
    window: int | None = 8192

    def context_window(self) -> int | None:
        return self.window


def reads(n: int) -> list[object]:
    return [*(tools(call("read", f"r{i}", file_path=f"f{i}.txt")) for i in range(n)), answer("read them all")]


def files(root: Path, n: int) -> None:
    for i in range(n):
        (root / f"f{i}.txt").write_text("\n".join(f"line {j} of file {i} " + "x" * 60 for j in range(35)))  # ~700 tokens


async def test_a_known_window_compacts_long_before_the_default_threshold(workspace: Path) -> None:
    files(workspace, 14)
    h = Harness(workspace, WindowModel(reads(14)))  # type: ignore[arg-type]
    summary = await h.run()
    assert summary.status.value == "completed"
    compacted = h.of("compacted")
    assert compacted, "an 8,192-token window must compact a ~10,000-token conversation"
    # Before the messages and the tools (~1,600 tokens) fill the window: at most its share, less the tools.
    assert all(c.before_tokens < WINDOW_SHARE * 8192 for c in compacted), compacted


async def test_without_a_window_the_configured_threshold_alone_applies(workspace: Path) -> None:
    files(workspace, 14)
    model = WindowModel(reads(14))  # type: ignore[arg-type]
    model.window = None
    h = Harness(workspace, model)
    await h.run()
    assert h.of("compacted") == []


def test_the_threshold_leaves_room_for_the_tools_and_the_reply() -> None:
    assert window_threshold(8192, 1900) == int(8192 * WINDOW_SHARE) - 1900
    assert window_threshold(4096, 5000) == 4096 // 8  # tools bigger than the window: still a threshold
