"""Dependency direction: domain imports nothing of the project outside itself, nor IO libraries."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

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


def test_frontends_do_not_import_each_other() -> None:
    """lsp/, acp/ and cli/ adapt the core; lsp/ and acp/ never import each other or cli/."""
    others = {"lsp": ("forge_lsp.acp", "forge_lsp.cli"), "acp": ("forge_lsp.lsp", "forge_lsp.cli")}
    for frontend, forbidden in others.items():
        files = list((PACKAGE / frontend).rglob("*.py"))
        assert files
        for f in files:
            for name in imports(f):
                assert not name.startswith(forbidden), f"{frontend}/{f.name} imports {name}"


TURN_POLICY = ("forge_lsp.core.orchestrator", "forge_lsp.domain.tracker", "forge_lsp.core.commands")
"""The turn loop, the failure tracker and the /command expander: the core's prompt pipeline uses them."""


def test_frontends_leave_the_turn_to_the_core_pipeline() -> None:
    """lsp/, acp/ and cli/ only translate (core/pipeline.py: PromptRequest in, events out): none imports the
    orchestrator, the tracker or the command expander, even lazily or for types, nor expands a /command itself."""
    for frontend in ("lsp", "acp", "cli"):
        files = list((PACKAGE / frontend).rglob("*.py"))
        assert files
        for f in files:
            for name in imports(f):
                assert not name.startswith(TURN_POLICY), f"{frontend}/{f.name} imports {name}"
            assert "expand_command(" not in f.read_text(), f"{frontend}/{f.name} expands a /command itself"
            # A turn's state is the core's: what a frontend shows of it comes in the events (a retry's and an
            # interrupt's place in the transcript among them), not from the runtime's per-turn objects.
            assert "runtime.transcript" not in f.read_text(), f"{frontend}/{f.name} reads the turn's transcript writer"


def test_the_turn_policy_check_sees_a_lazy_import(tmp_path: Path) -> None:
    module = tmp_path / "handler.py"
    module.write_text("def run():\n    from forge_lsp.core.commands import split_invocation\n")
    assert any(name.startswith(TURN_POLICY) for name in imports(module))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports(path: Path, modules: set[str]) -> set[str]:
    """The project modules a file imports, at the top or inside a function (a lazy import is still a
    dependency), but not under `if TYPE_CHECKING:` (types only: nothing is imported when it runs)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("forge_lsp"):
            # `from pkg import sub` depends on the module pkg.sub; `from mod import name`, on mod.
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found |= subs or {node.module}
    return found & modules


def import_cycles() -> list[list[str]]:
    """Strongly connected groups of project modules (Tarjan): each group is an import cycle."""
    files = {module_name(f): f for f in PACKAGE.rglob("*.py")}
    graph = {m: sorted(project_imports(f, set(files)) - {m}) for m, f in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in graph[m]:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for m in sorted(graph):
        if m not in index:
            visit(m)
    return cycles


def test_no_import_cycles() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 40
    assert import_cycles() == []


def test_the_cycle_check_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "forge_lsp"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from forge_lsp.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def f():\n    from forge_lsp.a import x\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from forge_lsp import a\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert import_cycles() == [["forge_lsp.a", "forge_lsp.sub.b"]]


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


MAX_MODULE_LINES = 600
"""A module past this many lines holds more than one subject (docs/design.md "Architecture"); tools/cmdline.py,
a shell command line's reader, is one subject whatever its size."""
ONE_SUBJECT_AT_ANY_SIZE = {"tools/cmdline.py"}


def test_no_module_grows_past_one_subject() -> None:
    sizes = {
        str(f.relative_to(PACKAGE)): len(f.read_text(encoding="utf-8").splitlines())
        for f in PACKAGE.rglob("*.py")
        if str(f.relative_to(PACKAGE)) not in ONE_SUBJECT_AT_ANY_SIZE
    }
    assert len(sizes) > 100
    too_long = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not too_long, f"split these by subject: {too_long}"
