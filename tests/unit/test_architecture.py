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
    for name in imports(PACKAGE / "orchestrator.py"):
        assert not name.startswith(("forge_lsp.llm", "forge_lsp.tools", "forge_lsp.lsp", "litellm", "pygls")), name


def test_lsp_layer_holds_no_retry_or_limit_logic() -> None:
    for f in (PACKAGE / "lsp").glob("*.py"):
        text = f.read_text()
        assert "ToolErrorTracker" not in text and "remaining_attempts" not in text, f.name


def test_state_modules_import_each_other_by_module_path() -> None:
    # Through the package's __init__ (which imports them all) an import would cycle.
    files = [f for f in (PACKAGE / "state").glob("*.py") if f.name != "__init__.py"]
    assert files
    for f in files:
        for name in imports(f):
            assert name not in ("forge_lsp", "forge_lsp.state"), f"{f.name} imports {name}"


def defined(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_state_package_re_exports_the_names_of_its_modules() -> None:
    # forge_lsp.state was one module: `from forge_lsp.state import StateStore` and the like keep working.
    import importlib

    import forge_lsp.state as package

    for name in package.__all__:
        homes = [f.stem for f in (PACKAGE / "state").glob("*.py") if f.name != "__init__.py" and name in defined(f)]
        assert len(homes) == 1, (name, homes)
        assert getattr(package, name) is getattr(importlib.import_module(f"forge_lsp.state.{homes[0]}"), name), name
    for name in ("StateStore", "StateRegistry", "INTERRUPTED_RESULT", "title_of", "stored_state_file", "may_signal"):
        assert name in package.__all__, name
