"""The user's documentation lives in the repository and says what the code does."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from forge_lsp.cli.parser import build_parser
from forge_lsp.config import snake_keys
from forge_lsp.domain.config import HIGHER, KEYS, LOWER, validate
from forge_lsp.domain.events import Event
from forge_lsp.domain.tool_catalog import TOOL_NAMES
from forge_lsp.lsp.server import COMMANDS
from forge_lsp.tools.registry import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def test_links_stay_inside_the_repository_and_resolve() -> None:
    for page in pages():
        text = page.read_text()
        assert "../shared" not in text and "DESIGN.md" not in text, page
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
            assert path.exists(), f"{page.name}: {target} does not exist"


def test_the_readme_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in ("design.md", "tools.md", "config.md", "cli.md", "scripted-model.md", "acp.md"):
        assert f"(docs/{page})" in readme


def test_every_tool_and_argument_is_documented() -> None:
    text = (DOCS / "tools.md").read_text()
    for schema in ToolRegistry().schemas():
        fn = schema["function"]
        assert f"## {fn['name']}\n" in text, fn["name"]
        section = text.split(f"## {fn['name']}\n", 1)[1].split("\n## ", 1)[0]
        for arg in fn["parameters"]["properties"]:
            assert f"`{arg}`" in section, f"{fn['name']}.{arg}"


def test_docs_tools_md_has_a_section_for_every_catalog_tool_and_no_other() -> None:
    # A tool added to the catalog without its section, or a section left after a tool went, fails here.
    headings = re.findall(r"^## (\S+)$", (DOCS / "tools.md").read_text(), re.MULTILINE)
    assert headings == list(TOOL_NAMES)


def _key_rows() -> dict[str, list[str]]:
    """docs/config.md's key table: dotted key -> [default, meaning, from an untrusted workspace]."""
    section = (DOCS / "config.md").read_text().split("\n## Keys\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        name, *cells = line.strip().removeprefix("| ").removesuffix(" |").split(" | ")
        assert len(cells) == 3, line
        m = re.fullmatch(r"`\[([^\]]+)\] (\w+)`|`(\w+)`", name)
        assert m, f"not a key: {name}"
        key = f"{m[1]}.{m[2]}" if m[1] else m[3]
        assert key not in rows, f"{key} documented twice"
        rows[key] = cells
    return rows


def _doc_default(cell: str) -> tuple[str, Any]:
    """("fallback", key) for a default that is another key's value, else ("value", the value)."""
    if m := re.fullmatch(r"`(\w+)`", cell):
        return "fallback", m[1]
    head = re.split(r" \(|:", cell, maxsplit=1)[0]
    return "value", None if head in ("none", "unset") else json.loads(head)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _doc_rule(cell: str) -> tuple[str, int, bool]:
    """(trust: "applies" | "trust" | "some values", the direction that loosens, zero is off)."""
    if cell.startswith("**trust**"):
        return "trust", 0, False
    if cell == "applies" or cell.startswith("tighten only, trusted or not: "):
        return "applies", 0, False
    if cell.startswith("applies; ") and cell.endswith(" needs **trust**"):
        return "some values", 0, False
    m = re.fullmatch(r"tighten only: a (higher|lower) value(, or 0 \(off\) where yours is on,)? is ignored", cell)
    assert m, f"not a rule: {cell}"
    return "applies", HIGHER if m[1] == "higher" else LOWER, bool(m[2])


def test_the_config_key_table_is_the_schemas() -> None:
    rows = _key_rows()
    assert set(rows) - set(KEYS) == set(), "docs/config.md names keys the schema lacks"
    assert set(KEYS) - set(rows) == set(), "keys of the schema missing from docs/config.md"
    for key, spec in KEYS.items():
        default, meaning, untrusted = rows[key]
        kind, value = _doc_default(default)
        if spec.fallback is not None:
            assert spec.default is None and (kind, value) == ("fallback", spec.fallback), key
        else:
            assert kind == "value" and _same(value, spec.default), f"{key}: {default} is not {spec.default!r}"
        trust = "applies" if spec.trust is None else "some values" if spec.trust_if else "trust"
        assert _doc_rule(untrusted) == (trust, spec.looser, spec.zero_is_off), f"{key}: {untrusted}"
        assert ("merged across levels" in meaning) == spec.union, key
        assert ("tighten only, trusted or not" in untrusted) == bool(spec.ranks), key


def test_the_config_examples_are_valid() -> None:
    text = (DOCS / "config.md").read_text()
    toml_example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    assert validate(tomllib.loads(toml_example))[1] == []
    settings = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])
    section = {k.removeprefix("forge."): v for k, v in settings.items()}
    assert validate(snake_keys(section))[1] == []


def test_every_command_and_event_type_is_in_the_design() -> None:
    text = (DOCS / "design.md").read_text()
    for command in COMMANDS:
        assert f"| `{command}` |" in text, command
    kinds = [cls.type for cls in _subclasses(Event) if cls.type]
    assert len(kinds) >= 8
    for kind in kinds:
        assert f"| `{kind}` |" in text, kind
    for code in ("tool-retry", "max-tool-failure-per-turn", "max-requests-per-turn", "max-repeated-calls-per-turn"):
        assert f"`{code}`" in text


def test_every_cli_command_is_in_cli_md() -> None:
    text = (DOCS / "cli.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"## forge-lsp {name}" in text, name


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out
