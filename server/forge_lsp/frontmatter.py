"""Markdown with YAML front matter (agents, commands): the fields, the body, and the line of each.

The front matter is parsed by PyYAML's safe loader (plain data: no tags, no objects); every error
carries its 1-based line in the file. A workspace's definitions are an attacker's to write, so the
front matter is bounded before it becomes data: its size (MAX_FRONT_MATTER_BYTES), what its YAML
aliases expand to (MAX_FRONT_MATTER_VALUES: nine levels of nine aliases are 387 million values, though
the loaded data shares them), and its nesting (MAX_FRONT_MATTER_DEPTH). Errors name the field, never
print its value.
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
MAX_FRONT_MATTER_BYTES = 64 * 1024
"""The fields of a definition (its body, the prompt, may be longer)."""
MAX_FRONT_MATTER_VALUES = 10_000
"""Scalars, lists and mappings the front matter holds once its aliases are expanded."""
MAX_FRONT_MATTER_DEPTH = 50
"""Lists and mappings nested at most this deep (PyYAML reads them recursively)."""


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
    if len(block.encode("utf-8", "surrogateescape")) > MAX_FRONT_MATTER_BYTES:
        raise FrontMatterError(f"the front matter is over {MAX_FRONT_MATTER_BYTES} bytes")
    if _nesting(block) > MAX_FRONT_MATTER_DEPTH:
        raise FrontMatterError(f"the front matter nests lists or mappings deeper than {MAX_FRONT_MATTER_DEPTH}")
    loader = yaml.SafeLoader(block)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_size(node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # Past the last field (an unclosed '[' found at the end): the last field's line.
        line = min(mark.line, max(end - 2, 0)) + 2 if mark is not None else 1
        problem = exc.problem or exc.context or "not valid YAML"
        raise FrontMatterError(f"front matter is not valid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {exc}") from None
    except RecursionError:
        raise FrontMatterError("the front matter nests too deep to be read") from None
    finally:
        loader.dispose()
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


def _nesting(block: str) -> int:
    """How deep '[' and '{' nest in the block, at most (a quoted bracket counts too: an upper bound, read before
    the recursive parser sees the text)."""
    depth = deepest = 0
    for c in block:
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _check_size(root: yaml.Node) -> None:
    """FrontMatterError when the node graph, its aliases expanded, holds more than MAX_FRONT_MATTER_VALUES nodes
    or nests deeper than MAX_FRONT_MATTER_DEPTH; the error names the top-level field where the limit is passed.

    Each distinct node is counted once with what it expands to (memoised), so the count costs the size of
    the file, not of the expansion."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node, depth: int) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if depth > MAX_FRONT_MATTER_DEPTH:
            raise _TooLarge(f"nests lists or mappings deeper than {MAX_FRONT_MATTER_DEPTH}")
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children: list[yaml.Node] = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        sizes[id(node)] = MAX_FRONT_MATTER_VALUES + 1  # a node that reached itself counts as too large
        for child in children:
            total += size(child, depth + 1)
            if total > MAX_FRONT_MATTER_VALUES:
                break
        sizes[id(node)] = total
        return total

    pairs = root.value if isinstance(root, yaml.MappingNode) else [(None, root)]
    total = 1
    for key, value in pairs:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        line = (key or value).start_mark.line + 2
        where = f"field {str(name)[:64]}" if name is not None else "front matter"
        try:
            total += (size(key, 1) if key is not None else 0) + size(value, 1)
        except _TooLarge as exc:
            raise FrontMatterError(f"{where}: {exc}", line) from None
        if total > MAX_FRONT_MATTER_VALUES:
            raise FrontMatterError(
                f"{where}: the front matter holds more than {MAX_FRONT_MATTER_VALUES} values once its YAML aliases are expanded",
                line,
            )


class _TooLarge(Exception):
    pass


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
