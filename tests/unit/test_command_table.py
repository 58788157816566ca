"""The command table: the server's commands are one table, the contract's table in docs/design.md is the same,
and every server command an editor's table sends is one of them."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import get_type_hints

from forge_lsp.lsp.command_arguments import RunArgument, shape
from forge_lsp.lsp.server import COMMANDS, SERVER_COMMANDS

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / "editors" / "vscode"


def design_rows() -> list[tuple[str, str]]:
    """docs/design.md's command table: (command, argument), in its order."""
    text = (ROOT / "docs" / "design.md").read_text()
    return re.findall(r"^\| `(forge\.\w+)` \| `(\{[^`]*\})` \|", text, re.MULTILINE)


def test_the_design_command_table_is_the_server_table() -> None:
    assert design_rows() == [(c.name, c.shape()) for c in SERVER_COMMANDS]
    assert tuple(c.name for c in SERVER_COMMANDS) == COMMANDS and len(set(COMMANDS)) == len(COMMANDS)


def test_every_handler_takes_the_argument_as_pygls_hands_it() -> None:
    # (ls, *args): pygls 2 converts nothing (no annotation to structure into), so the handler sees the object
    # as the client sent it and names a bad field itself, the same for every command.
    for command in SERVER_COMMANDS:
        params = list(inspect.signature(command.handler).parameters.values())
        kinds = [p.kind for p in params]
        assert kinds == [inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL], command.name
        assert inspect.iscoroutinefunction(command.handler), command.name


def test_every_field_a_handler_reads_is_one_of_its_argument_class() -> None:
    for command in SERVER_COMMANDS:
        read = set(re.findall(r'arg\.get\("(\w+)"', inspect.getsource(command.handler)))
        assert read <= set(get_type_hints(command.argument)), (command.name, read)
    assert shape(RunArgument) == "{prompt, model?, agent?, uri?, range?}"


def vscode_table() -> list[dict[str, object]]:
    """src/commands.ts's PALETTE rows (TypeScript object literals of strings, arrays of strings and booleans)."""
    source = (VSCODE / "src" / "commands.ts").read_text()
    body = source.split("export const PALETTE = [", 1)[1].split("] as const", 1)[0]
    rows = []
    for literal in re.findall(r"\{[^{}]*\}", body):
        quoted = re.sub(r"([{,]\s*)(\w+):", r'\1"\2":', literal)
        rows.append(json.loads(quoted))
    return rows


def test_vscode_sends_only_server_commands_and_package_json_is_its_table() -> None:
    rows = vscode_table()
    assert len(rows) >= 13
    for row in rows:
        for name in row["sends"]:  # type: ignore[union-attr]
            assert name in COMMANDS, (row["id"], name)
    contributes = json.loads((VSCODE / "package.json").read_text())["contributes"]
    assert [{"command": r["id"], "title": r["title"]} for r in rows] == contributes["commands"]
    hidden = [{"command": r["id"], "when": "false"} for r in rows if r.get("hidden")]
    assert hidden == contributes["menus"]["commandPalette"]
