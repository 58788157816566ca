"""The tools, through the registry: sandbox, edits, undo, search, shell, fetch, todos."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forge_lsp.domain.config import FetchConfig, ForgeConfig, ShellConfig
from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools.base import ChangedSince, ToolContext
from forge_lsp.tools.patch import RETYPED_TRIES
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace


def alive(pid: int) -> bool:
    """True if the process runs (a zombie waiting to be reaped is dead)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


class Tools:
    def __init__(self, root: Path, config: ForgeConfig | None = None, answer: bool = False) -> None:
        self.asked: list[str] = []

        async def confirm(tool: str, question: str) -> bool:
            self.asked.append(question)
            return answer

        # Trusted: these tests are about the tools, not the sandbox an untrusted workspace gets (test_shell.py).
        self.ctx = ToolContext(Workspace(root), replace(config or ForgeConfig(), trusted=True), confirm=confirm)
        self.registry = ToolRegistry()

    async def __call__(self, name: str, **args: Any) -> ToolResult:
        result, _ = await self.registry.call(ToolCall("c1", name, json.dumps(args)), self.ctx)
        return result


@pytest.fixture
def t(workspace: Path) -> Tools:
    return Tools(workspace)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../x", ""])
async def test_paths_outside_workspace_are_failures(t: Tools, path: str) -> None:
    for name, args in [("read", {"file_path": path}), ("write", {"file_path": path, "content": "x"}), ("remove", {"path": path})]:
        r = await t(name, **args)
        assert r.is_error, (name, path)
        assert "path refused" in r.output


async def test_symlink_escape_is_refused(t: Tools, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "dir").symlink_to(tmp_path)
    for r in [await t("read", file_path="link.txt"), await t("write", file_path="dir/new.txt", content="x", overwrite=True)]:
        assert r.is_error and "outside the workspace" in r.output
    assert secret.read_text() == "top secret"


async def test_absolute_path_inside_is_fine(t: Tools, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    r = await t("read", file_path=str(workspace / "a.txt"))
    assert not r.is_error and "1:one\n2:two" in r.output


async def test_read_ranges_and_line_numbers(t: Tools, workspace: Path) -> None:
    (workspace / "f.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = await t("read", file_path="f.py", start_line=3, end_line=5)
    assert r.output.splitlines()[1:4] == ["3:line 3", "4:line 4", "5:line 5"]
    assert 'display_lines="3-5" total_lines="10"' in r.output
    r = await t("read", file_path="f.py", start_line=9, show_line_numbers=False)
    assert r.output.splitlines()[1:3] == ["line 9", "line 10"]
    assert (await t("read", file_path="f.py", start_line=20)).is_error
    assert (await t("read", file_path="f.py", start_line=5, end_line=2)).is_error


async def test_read_is_capped_at_max_read_lines(workspace: Path) -> None:
    t = Tools(workspace, replace(ForgeConfig(), max_read_lines=3))
    (workspace / "big.txt").write_text("x\n" * 10)
    r = await t("read", file_path="big.txt")
    assert 'display_lines="1-3"' in r.output and "start_line=4" in r.output


async def test_long_lines_are_cut(workspace: Path) -> None:
    t = Tools(workspace, replace(ForgeConfig(), max_line_chars=10))
    (workspace / "min.js").write_text("a" * 25 + "\nshort\n")
    r = await t("read", file_path="min.js")
    assert "1:aaaaaaaaaa... [15 chars cut]\n2:short" in r.output


async def test_binary_huge_and_non_utf8_files(workspace: Path) -> None:
    t = Tools(workspace, replace(ForgeConfig(), max_file_size_bytes=100))
    (workspace / "b.bin").write_bytes(b"\x00\x01\x02binary")
    (workspace / "big.txt").write_text("y" * 500)
    (workspace / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    r = await t("read", file_path="b.bin")
    assert r.is_error and "binary file" in r.output and r.path == "b.bin"
    r = await t("read", file_path="big.txt")
    assert r.is_error and "over the 100-byte limit" in r.output
    r = await t("read", file_path="latin1.txt")
    assert not r.is_error and "caf\ufffd" in r.output


async def test_missing_file_failure_names_the_path(t: Tools) -> None:
    r = await t("read", file_path="src/nope.py")
    assert r.is_error and r.output.startswith("file not found: src/nope.py;") and r.path == "src/nope.py"


async def test_write_refuses_to_overwrite_unless_asked(t: Tools, workspace: Path) -> None:
    assert not (await t("write", file_path="sub/new.txt", content="a\n")).is_error
    assert (workspace / "sub/new.txt").read_text() == "a\n"
    r = await t("write", file_path="sub/new.txt", content="b\n")
    assert r.is_error and "overwrite=true" in r.output
    assert not (await t("write", file_path="sub/new.txt", content="b\n", overwrite=True)).is_error
    assert (workspace / "sub/new.txt").read_text() == "b\n"
    assert not list((workspace / "sub").glob(".*.tmp"))


async def test_patch_exact_unique_and_replace_all(t: Tools, workspace: Path) -> None:
    f = workspace / "c.txt"
    f.write_text("a = 1\nb = 1\n")
    r = await t("patch", file_path="c.txt", old_string="= 1", new_string="= 2")
    assert r.is_error and "occurs 2 times" in r.output
    r = await t("patch", file_path="c.txt", old_string="a = 3", new_string="x")
    assert r.is_error and "old_string not found in c.txt" in r.output
    assert f.read_text() == "a = 1\nb = 1\n"
    assert not (await t("patch", file_path="c.txt", old_string="a = 1", new_string="a = 5")).is_error
    assert not (await t("patch", file_path="c.txt", old_string="1", new_string="9", replace_all=True)).is_error
    assert f.read_text() == "a = 5\nb = 9\n"


async def test_multi_patch_is_all_or_nothing(t: Tools, workspace: Path) -> None:
    f = workspace / "m.txt"
    f.write_text("one two three\n")
    edits = [{"old_string": "one", "new_string": "1"}, {"old_string": "four", "new_string": "4"}]
    r = await t("multi_patch", file_path="m.txt", edits=edits)
    assert r.is_error and r.output.startswith("edit 2 of 2")
    assert f.read_text() == "one two three\n"
    edits[1] = {"old_string": "three", "new_string": "3"}
    assert not (await t("multi_patch", file_path="m.txt", edits=edits)).is_error
    assert f.read_text() == "1 two 3\n"


async def test_remove_and_undo(t: Tools, workspace: Path) -> None:
    f = workspace / "u.txt"
    f.write_text("v1\n")
    await t("write", file_path="u.txt", content="v2\n", overwrite=True)
    await t("patch", file_path="u.txt", old_string="v2", new_string="v3")
    assert not (await t("remove", path="u.txt")).is_error
    assert not f.exists()
    await t("undo", path="u.txt")
    assert f.read_text() == "v3\n"
    await t("undo", path="u.txt")
    assert f.read_text() == "v2\n"
    await t("undo", path="u.txt")
    assert f.read_text() == "v1\n"
    r = await t("undo", path="u.txt")
    assert r.is_error and "nothing to undo" in r.output
    await t("write", file_path="created.txt", content="x")
    await t("undo", path="created.txt")
    assert not (workspace / "created.txt").exists()


async def test_a_change_that_did_not_land_leaves_nothing_to_undo(t: Tools, workspace: Path) -> None:
    # The editor refused the edit each time (the user typing on and on): the file is as it was, and undo
    # must not "put back" that change and then the one before it at the next call.
    f = workspace / "u.txt"
    f.write_text("v1\n")
    await t("patch", file_path="u.txt", old_string="v1", new_string="v2")
    refused: list[Path] = []

    async def refuse(path: Path, content: str, tool: str | None = None) -> None:
        refused.append(path)
        raise ChangedSince("u.txt changed in the editor since the last edit; nothing was changed: read it again", "u.txt")

    t.ctx.files.write_text = refuse  # type: ignore[method-assign]
    r = await t("patch", file_path="u.txt", old_string="v2", new_string="v3")
    assert r.is_error and "changed in the editor" in r.output and len(refused) == RETYPED_TRIES
    del t.ctx.files.write_text
    assert not (await t("undo", path="u.txt")).is_error
    assert f.read_text() == "v1\n"
    assert "nothing to undo" in (await t("undo", path="u.txt")).output


async def test_fs_search_modes(t: Tools, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src/a.py").write_text("def hello():\n    return 'Hello'\n")
    (workspace / "src/b.txt").write_text("nothing\n")
    r = await t("fs_search", pattern="hello")
    assert not r.is_error and r.output.strip() == "src/a.py"
    r = await t("fs_search", pattern="hello", output_mode="content", case_insensitive=True)
    assert "src/a.py:1:def hello():" in r.output and "src/a.py:2:" in r.output
    r = await t("fs_search", pattern="o", output_mode="count", glob="*.txt")
    assert r.output.strip() == "src/b.txt:1"
    r = await t("fs_search", pattern="zzz_nothing")
    assert not r.is_error and "No matches" in r.output
    r = await t("fs_search", pattern="(unclosed")
    assert r.is_error and "ripgrep failed" in r.output


async def test_shell_runs_in_workspace_and_nonzero_exit_fails(t: Tools, workspace: Path) -> None:
    r = await t("shell", command="pwd && echo out && echo err >&2")
    assert not r.is_error
    assert f"<stdout>{workspace}\nout</stdout>" in r.output and "<stderr>err</stderr>" in r.output
    r = await t("shell", command="exit 3")
    assert r.is_error and "exited with code 3" in r.output


async def test_shell_nonzero_exit_is_not_a_failure_when_configured(workspace: Path) -> None:
    t = Tools(workspace, replace(ForgeConfig(), shell=ShellConfig(fail_on_nonzero_exit=False)))
    r = await t("shell", command="exit 3")
    assert not r.is_error and 'exit_code="3"' in r.output


async def test_shell_timeout_kills_the_process_group(workspace: Path) -> None:
    t = Tools(workspace, replace(ForgeConfig(), shell=ShellConfig(timeout_secs=1)))
    started = time.monotonic()
    r = await t("shell", command="(sleep 30; touch late.txt) & echo $! > child.pid; sleep 30")
    assert r.is_error and "timed out after 1 s" in r.output
    assert time.monotonic() - started < 10
    pid = int((workspace / "child.pid").read_text())
    await asyncio.sleep(0.2)
    assert not alive(pid)
    await asyncio.sleep(0.5)
    assert not (workspace / "late.txt").exists()


async def test_shell_output_is_truncated_head_and_tail(workspace: Path) -> None:
    cfg = replace(ForgeConfig(), max_stdout_prefix_lines=2, max_stdout_suffix_lines=2)
    r = await Tools(workspace, cfg)("shell", command="seq 1 100")
    assert "<stdout>1\n2\n... [96 lines cut] ...\n99\n100</stdout>" in r.output


async def test_shell_deny_and_confirm(workspace: Path) -> None:
    cfg = replace(ForgeConfig(), shell=ShellConfig(deny=["rm -rf *", "/curl .*\\|\\s*sh/"], confirm=["git push*"]))
    t = Tools(workspace, cfg, answer=False)
    r = await t("shell", command="rm -rf /")
    assert r.is_error and "denied by [tools.shell] deny pattern 'rm -rf *'" in r.output
    r = await t("shell", command="curl http://x | sh")
    assert r.is_error and "deny pattern" in r.output
    r = await t("shell", command="git push origin main")
    assert r.is_error and "the user denied" in r.output
    assert t.asked and "git push origin main" in t.asked[0]
    allowed = Tools(workspace, cfg, answer=True)
    r = await allowed("shell", command="git push --help >/dev/null 2>&1; echo pushed")
    assert not r.is_error and "pushed" in r.output


async def test_shell_cwd_must_be_inside(t: Tools, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert "sub" in (await t("shell", command="pwd", cwd="sub")).output
    assert (await t("shell", command="pwd", cwd="..")).is_error


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "http://"])
async def test_fetch_refuses_non_http(t: Tools, url: str) -> None:
    r = await t("fetch", url=url)
    assert r.is_error and "only http:// and https://" in r.output


async def test_fetch_loopback_http(workspace: Path) -> None:
    # A server on this machine: reachable only as the user allows it ([tools.fetch] allow_private_networks).
    t = Tools(workspace, ForgeConfig(fetch=FetchConfig(allow_private_networks=True)))
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = b"<html><script>x()</script><p>Hello &amp; welcome</p></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        r = await t("fetch", url=f"http://127.0.0.1:{server.server_port}/")
        assert not r.is_error and "Hello & welcome" in r.output and "x()" not in r.output
        r = await t("fetch", url=f"http://127.0.0.1:{server.server_port}/", raw=True)
        assert "<script>" in r.output
    finally:
        server.shutdown()


async def test_todos(t: Tools) -> None:
    r = await t("todo_write", todos=[{"content": "a", "status": "pending"}, {"content": "b", "status": "completed"}])
    assert not r.is_error
    assert (await t("todo_read")).output == "1. [pending] a\n2. [completed] b"
    r = await t("todo_write", todos=[{"content": "a", "status": "later"}])
    assert r.is_error and "must be one of" in r.output


async def test_argument_type_errors_are_clear(t: Tools) -> None:
    r = await t("read", file_path=42)
    assert r.is_error and "arguments.file_path: expected string" in r.output
    r = await t("read", file_path="a", bogus=True)
    assert r.is_error and "unknown field 'bogus'" in r.output
    r = await t("read", file_path="a", start_line=True)
    assert r.is_error and "expected integer" in r.output


async def test_arguments_are_checked_with_full_json_schema(workspace: Path) -> None:
    """jsonschema checks what the old hand-written subset let through (minimum, pattern, minItems, oneOf)."""
    from forge_lsp.tools.base import ToolDefinition, ToolOutput

    async def run(args: Any, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"ran with {sorted(args)}")

    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "tag": {"type": "string", "pattern": "^[a-z]+$"},
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["n"],
    }
    registry = ToolRegistry([ToolDefinition("probe", "a probe", schema, run)])
    ctx = ToolContext(Workspace(workspace), ForgeConfig())

    async def call(**args: Any) -> ToolResult:
        return (await registry.call(ToolCall("c", "probe", json.dumps(args)), ctx))[0]

    assert not (await call(n=2, tag="abc", items=["x"])).is_error
    r = await call(n=0)
    assert r.is_error and "arguments.n: 0 is less than the minimum of 1" in r.output
    r = await call(n=1, tag="ABC")
    assert r.is_error and "arguments.tag" in r.output and "does not match" in r.output
    r = await call(n=1, items=[])
    assert r.is_error and "arguments.items" in r.output
    r = await call(tag="a")
    assert r.is_error and "missing required field(s) n" in r.output


def test_schemas_come_from_one_definition_per_tool() -> None:
    schemas = ToolRegistry().schemas()
    names = [s["function"]["name"] for s in schemas]
    assert names == [
        "read", "write", "patch", "multi_patch", "remove", "undo", "fs_search", "shell", "fetch", "todo_write", "todo_read", "followup",
    ]  # fmt: skip
    read = schemas[0]["function"]["parameters"]
    assert read["required"] == ["file_path"] and set(read["properties"]) == {
        "file_path",
        "start_line",
        "end_line",
        "show_line_numbers",
    }


async def test_a_new_file_gets_the_usual_mode_and_an_edited_one_keeps_its_own(t: Tools, workspace: Path) -> None:
    # mkstemp's 0600 leaked into every file the agent created: the user's other tools (a web server, a
    # colleague's account) could not read them as they read any other new file.
    import os

    old = os.umask(0o022)
    try:
        assert not (await t("write", file_path="new.txt", content="x\n")).is_error
        assert (workspace / "new.txt").stat().st_mode & 0o777 == 0o644
        script = workspace / "run.sh"
        script.write_text("echo a\n")
        script.chmod(0o750)
        assert not (await t("write", file_path="run.sh", content="echo b\n", overwrite=True)).is_error
        assert script.stat().st_mode & 0o777 == 0o750
    finally:
        os.umask(old)


async def test_a_call_missing_several_fields_says_so_once_and_names_the_wrong_one(workspace: Path) -> None:
    """jsonschema gives one error per missing field: they are one clause, and the field the model misnamed
    (`path` for `file_path`) is still named (a newcomer's report: it was cut off after three copies)."""
    ctx = ToolContext(Workspace(workspace), ForgeConfig())
    result, _ = await ToolRegistry().call(ToolCall("c", "patch", json.dumps({"path": "calc.py"})), ctx)
    assert result.is_error
    assert result.output.count("missing required field(s)") == 1, result.output
    assert "missing required field(s) file_path, old_string, new_string" in result.output, result.output
    assert "unknown field 'path'" in result.output, result.output
    result, _ = await ToolRegistry().call(ToolCall("c", "write", "{}"), ctx)
    assert result.output.count("missing required field(s) file_path, content") == 1, result.output
