"""Markdown with YAML front matter (agents, commands): the fields, the body, and the line of each.

The front matter is parsed by PyYAML's safe loader (plain data: no tags, no objects); every error
carries its 1-based line in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from forge_lsp.textfile import read_text

MAX_DEFINITION_BYTES = 256 * 1024
"""A larger definition file is not read."""
MAX_DEFINITION_FILES = 200
"""At most this many definitions are read from one folder (the first ones by name)."""


class FrontMatterError(ValueError):
    """A file whose front matter cannot be read; line is 1-based in the file."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Document:
    """A parsed file: its fields, the line of each field, its body and the body's first line."""

    fields: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1

    def line(self, key: str) -> int:
        return self.lines.get(key, 1)


def parse(text: str) -> Document:
    """Split text into its front matter (between '---' lines at the top) and its body.

    FrontMatterError (with the line) when the front matter is missing, unclosed, not YAML or not a mapping.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("no front matter: the file must begin with a '---' line, then the fields, then '---'")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...")), None)
    if end is None:
        raise FrontMatterError("the front matter is never closed: add a '---' line after the fields")
    block = "".join(lines[1:end])
    try:
        node = yaml.compose(block, Loader=yaml.SafeLoader)
        data = yaml.safe_load(block)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # Past the last field (an unclosed '[' found at the end): the last field's line.
        line = min(mark.line, max(end - 2, 0)) + 2 if mark is not None else 1
        problem = exc.problem or exc.context or "not valid YAML"
        raise FrontMatterError(f"front matter is not valid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError(f"front matter must be fields (key: value), not a {type(data).__name__}", 2)
    found: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, _value in node.value:
            if isinstance(key, yaml.ScalarNode):
                found.setdefault(str(key.value), key.start_mark.line + 2)
    body = "".join(lines[end + 1 :])
    return Document({str(k): v for k, v in data.items()}, found, body, end + 2)


def read_definition(path: Path, inside: Path | None = None) -> str:
    """A definition file's text: a regular file (inside `inside` when given), at most MAX_DEFINITION_BYTES.

    OSError (it cannot be read, or points outside) or ValueError (textfile.Unusable: not a regular file, too
    large, not UTF-8) with a message a person understands."""
    real = path.resolve()
    if inside is not None and not real.is_relative_to(inside.resolve()):
        raise OSError(f"it points outside the workspace ({real})")
    text = read_text(real, MAX_DEFINITION_BYTES)  # Unusable is a ValueError
    if text is None:
        raise OSError("not a regular file")
    return text


def definitions(folder: Path) -> list[Path]:
    """The *.md files of folder, sorted, at most MAX_DEFINITION_FILES; [] when there is no such folder."""
    try:
        if not folder.is_dir():
            return []
        return sorted(folder.glob("*.md"))[:MAX_DEFINITION_FILES]
    except OSError:
        return []
