"""The user's documentation lives in the repository and says what the code does."""

from __future__ import annotations

import re
from pathlib import Path

from forge_lsp.cli.parser import build_parser
from forge_lsp.domain.config import default_values
from forge_lsp.domain.events import Event
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


def test_every_config_key_is_documented() -> None:
    text = (DOCS / "config.md").read_text()
    for key in default_values():
        if key.startswith("tools.shell."):
            name = f"`[tools.shell] {key.rsplit('.', 1)[1]}`"
        elif key.startswith(("retry.", "compact.")):
            table, field = key.split(".", 1)
            name = f"`[{table}] {field}`"
        else:
            name = f"`{key}`"
        assert f"| {name} |" in text, key
    assert "| `[tools.<name>] max_failures` |" in text


def test_every_command_and_event_type_is_in_the_design() -> None:
    text = (DOCS / "design.md").read_text()
    for command in COMMANDS:
        assert f"| `{command}` |" in text, command
    kinds = [cls.type for cls in _subclasses(Event) if cls.type]
    assert len(kinds) >= 8
    for kind in kinds:
        assert f"| `{kind}` |" in text, kind
    for code in ("tool-retry", "max-tool-failure-per-turn", "max-requests-per-turn"):
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
