"""Dependency direction: domain imports nothing of the project outside itself, nor IO libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import forge_lsp

PACKAGE = Path(forge_lsp.__file__).parent
FORBIDDEN_IN_DOMAIN = {"pygls", "lsprotocol", "litellm", "pybars", "sqlite3", "subprocess", "socket", "urllib", "os", "pathlib"}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_domain_is_pure() -> None:
    files = list((PACKAGE / "domain").glob("*.py"))
    assert files
    for f in files:
        for name in imports(f):
            top = name.split(".")[0]
            assert top not in FORBIDDEN_IN_DOMAIN, f"{f.name} imports {name}"
            if top == "forge_lsp":
                assert name.startswith("forge_lsp.domain"), f"{f.name} imports {name}"


def test_orchestrator_does_not_import_adapters() -> None:
    for name in imports(PACKAGE / "core" / "orchestrator.py"):
        assert not name.startswith(("forge_lsp.llm", "forge_lsp.tools", "forge_lsp.lsp", "litellm", "pygls")), name


def test_lsp_layer_holds_no_retry_or_limit_logic() -> None:
    for f in (PACKAGE / "lsp").glob("*.py"):
        text = f.read_text()
        assert "ToolErrorTracker" not in text and "remaining_attempts" not in text, f.name


def test_lsp_and_acp_do_not_import_the_cli() -> None:
    for f in [*(PACKAGE / "lsp").glob("*.py"), *(PACKAGE / "acp").glob("*.py")]:
        for name in imports(f):
            assert not name.startswith("forge_lsp.cli"), f"{f.parent.name}/{f.name} imports {name}"
