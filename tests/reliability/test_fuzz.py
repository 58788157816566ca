"""Hostile and random input: tools, files, templates, config. Never a crash, always a clear error."""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from forge_lsp.config import ConfigLoader
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.messages import ToolCall
from forge_lsp.domain.template_names import RETRY_MESSAGE
from forge_lsp.redact import redact
from forge_lsp.templates import TemplateEngine, TemplateError
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace

# FORGE_HYPOTHESIS_EXAMPLES=2000 shakes out other seeds in one long run (tests/conftest.py does the same for the rest).
EXAMPLES = int(os.environ.get("FORGE_HYPOTHESIS_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
COUNTS: dict[str, int] = {}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
tool_names = st.sampled_from([*ToolRegistry().names(), "", "nope", "../shell", "read\x00"]) | st.text(max_size=12)
arg_keys = st.sampled_from(
    [
        "file_path",
        "path",
        "content",
        "old_string",
        "new_string",
        "command",
        "pattern",
        "url",
        "todos",
        "edits",
        "start_line",
        "cwd",
        "env",
    ]
)


def tally(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


@FUZZ
@given(name=tool_names, args=st.dictionaries(arg_keys, json_values, max_size=4) | json_values)
def test_random_tool_calls_never_crash(tmp_path: Path, name: str, args: Any) -> None:
    ctx = ToolContext(Workspace(tmp_path), ForgeConfig(tool_timeout_secs=5))
    raw = json.dumps(args) if not isinstance(args, str) else args
    result, _ = asyncio.run(ToolRegistry().call(ToolCall("c", name, raw), ctx))
    tally("tool calls")
    assert isinstance(result.output, str)
    if result.is_error:
        assert result.output.strip(), "a failure must say why"
    # nothing escaped the workspace
    assert not (tmp_path.parent / "escaped.txt").exists()


@FUZZ
@given(data=st.binary(max_size=4096))
def test_random_bytes_files_read_safely(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "blob").write_bytes(data)
    ctx = ToolContext(Workspace(tmp_path), ForgeConfig())
    result, _ = asyncio.run(ToolRegistry().call(ToolCall("c", "read", '{"file_path": "blob"}'), ctx))
    tally("byte files")
    if b"\0" in data[:8192]:
        assert result.is_error and "binary file" in result.output
    else:
        assert not result.is_error and 'path="blob"' in result.output


@FUZZ
@given(source=st.text(alphabet=st.sampled_from(list("{}#/>!^ abc\nelsifx")), max_size=60) | st.text(max_size=60))
def test_random_template_overrides_never_crash(tmp_path: Path, source: str) -> None:
    folder = tmp_path / ".forge" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RETRY_MESSAGE).write_text(source)
    engine = TemplateEngine(tmp_path)
    tally("template texts")
    try:
        out = engine.render(RETRY_MESSAGE, {"attempts_left": 1, "allowed_max_attempts": 3})
    except TemplateError as exc:
        assert "forge-tool-retry-message.md" in str(exc)
    else:
        assert isinstance(out, str)
    for error in engine.errors:
        assert "forge-tool-retry-message.md" in error and "built-in" in error


toml_texts = st.text(max_size=120) | st.builds(
    lambda k, v: f"{k} = {v}\n",
    st.sampled_from(
        ["model", "max_tool_failure_per_turn", "retry.max_attempts", "tools.shell.deny", "api_key", "nope", "[retry"]
    ),
    st.sampled_from(['"x"', "3", "-1", "true", "[1, 2]", '["a"]', "{a = 1}", "", "1.5", '"""']),
)


@FUZZ
@given(text=toml_texts)
@example(text="\r")  # a bare CR is not a TOML newline: the file must reach the parser byte for byte
@example(text='model = "x"\r\n')
def test_random_config_toml_never_crashes(tmp_path: Path, text: str) -> None:
    (tmp_path / ".forge.toml").write_bytes(text.encode("utf-8"))
    loader = ConfigLoader(tmp_path, tmp_path / "no-user.toml")
    eff = loader.load()
    tally("config files")
    assert isinstance(eff.config, ForgeConfig)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert any("invalid TOML" in p.message for p in eff.problems)
        return
    if not parsed:
        assert eff.problems == []
    for p in eff.problems:
        assert p.path == tmp_path / ".forge.toml" and p.message


@FUZZ
@given(secret=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=8, max_size=40))
def test_secrets_are_redacted(secret: str) -> None:
    assume(secret not in "[REDACTED]" and secret not in "prefix [REDACTED] suffix")
    text = f"prefix {secret} suffix {secret}"
    assert secret not in redact(text, [secret])
    tally("secrets")


@pytest.fixture(autouse=True)
def _row(record_reliability) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Each fuzz test's row, from the inputs it generated: recorded by the test itself, as pytest-xdist may run the
    tests of this module on several workers (a row of them all, from the last test, missed those of the others)."""
    before = dict(COUNTS)
    yield
    for name, count in sorted(COUNTS.items()):
        if count > before.get(name, 0):
            record_reliability(
                f"fuzz: random {name}",
                f"{count - before.get(name, 0)} generated inputs (hypothesis)",
                "no crash; each failure a clear error",
            )
