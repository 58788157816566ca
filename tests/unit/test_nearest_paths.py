"""A missing path's error names the nearest existing paths, so a model that guessed wrong takes the right one next
(issue 38 item 7: a model guessed src/utils/textutil.py 25 times where only lib/textutil.py was)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools import nearest
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

from fakes import FakeModel, Harness, answer, call, tools


async def run(root: Path, name: str, **args: Any) -> ToolResult:
    ctx = ToolContext(Workspace(root), replace(ForgeConfig(), trusted=True))
    result, _ = await ToolRegistry().call(ToolCall("c1", name, json.dumps(args)), ctx)
    return result


def tree(root: Path, *paths: str) -> None:
    for p in paths:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text("x\n")


async def test_a_missing_file_names_the_same_name_elsewhere_and_near_spellings(workspace: Path) -> None:
    tree(workspace, "lib/textutil.py", "lib/textutils_test.py", "src/app.py", "README.md")
    r = await run(workspace, "read", file_path="src/utils/textutil.py")
    assert r.is_error and r.path == "src/utils/textutil.py"
    assert r.output.startswith("file not found: src/utils/textutil.py; the nearest existing paths: lib/textutil.py")
    # A near spelling of the name, in the same folder first.
    r = await run(workspace, "read", file_path="src/ap.py")
    assert "the nearest existing paths: src/app.py" in r.output


async def test_every_tool_with_a_path_names_the_nearest(workspace: Path) -> None:
    tree(workspace, "lib/textutil.py", "pkg/mod/core.py")
    patch = await run(workspace, "patch", file_path="textutil.py", old_string="x", new_string="y")
    assert patch.is_error and "lib/textutil.py" in patch.output
    remove = await run(workspace, "remove", path="src/textutil.py")
    assert remove.is_error and remove.output.startswith("file not found: src/textutil.py;") and "lib/textutil.py" in remove.output
    search = await run(workspace, "fs_search", pattern="x", path="pkg/mods")
    assert search.is_error and search.output.startswith("path not found: pkg/mods;") and "pkg/mod" in search.output
    shell = await run(workspace, "shell", command="true", cwd="pkg/mdo")
    assert shell.is_error and shell.output.startswith("cwd not found: pkg/mdo;") and "pkg/mod" in shell.output


async def test_nothing_like_it_says_how_to_look(workspace: Path) -> None:
    tree(workspace, "a.py")
    r = await run(workspace, "read", file_path="zzz/qqq.rs")
    assert r.output == (
        "file not found: zzz/qqq.rs; nothing in the workspace has that name or one close to it "
        "(fs_search with a glob lists files)"
    )


def test_the_walk_is_bounded_and_skips_tool_folders(workspace: Path) -> None:
    tree(workspace, "node_modules/dep/textutil.py", ".git/textutil.py", ".venv/lib/textutil.py", "src/a.py")
    paths = nearest.workspace_paths(workspace)
    assert "src/a.py" in paths and not [p for p in paths if "textutil" in p]
    for i in range(60):
        tree(workspace, f"many/d{i}/f.txt")
    started = time.perf_counter()
    assert len(nearest.workspace_paths(workspace)) > 100
    assert time.perf_counter() - started < nearest.MAX_WALK_S + 1
    assert nearest.nearest("x/f.txt", [f"many/d{i}/f.txt" for i in range(60)]) == [f"many/d{i}/f.txt" for i in range(5)]


async def test_the_model_gets_the_hint_in_the_cause_and_the_retry_notice_stays_the_same(workspace: Path) -> None:
    tree(workspace, "lib/textutil.py")
    model = FakeModel([tools(call("read", "r1", file_path="src/utils/textutil.py")), answer("done")])
    h = Harness(workspace, model)
    await h.run()
    sent = model.requests[1][-1]["content"]
    assert "<cause>file not found: src/utils/textutil.py; the nearest existing paths: lib/textutil.py</cause>" in sent
    (retry,) = h.of("retry")
    assert retry.notice == (
        "Tool call failed\n- **Attempts remaining:** 2\n"
        "- **Next steps:** Analyze the error, identify the root cause, and adjust your approach before retrying."
    )
