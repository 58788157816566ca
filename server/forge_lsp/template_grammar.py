"""The safe template grammar: every tag of a template, and the tree pybars3 parses, checked.

Templates are data, never code. pybars3 compiles a template to Python source
and pastes path segments, helper names and literals into it unquoted (a
``{{[x') or __import__('os')...]}}`` segment runs code). So every tag must
match a small safe grammar before pybars3 sees it (``check``, with file and
line), and the tree pybars3 parses is checked again (``_check_tree``) before
code is generated from it (forge_lsp.template_cache).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# pybars3 compiles at some milliseconds per tag, under one process-wide lock: a template with
# tens of thousands of tags would stall every other compile for minutes.
MAX_TAGS = 400
# Bumped whenever the grammar or the generated code's runtime changes: old cache files are never read.
GRAMMAR_VERSION = "3"


class TemplateError(Exception):
    """A template that cannot be loaded or rendered; the message says which and why."""


# ---------------------------------------------------------------------------
# The safe grammar
#
#   tag      := "{{" "~"? body "~"? "}}" | "{{{" "~"? expr "~"? "}}}"
#   body     := expr | "&" expr | "!" comment | "#" block args | "/" block
#             | "else" | "^" | ">" partial-file-name
#   expr     := path | helper arg+             (helper: inc, json, contains, eq; exact arity)
#   arg      := number | "string" | 'string' | true | false | path | "(" helper arg+ ")"
#   path     := ("../")* (name | this | @root) ("." name)* | @index | @first | @last | @key
#   block    := if | unless | each | with     (one argument; each/with take a path)
#
# A name is ASCII letters, digits, "_" and "-", starting with a letter; a
# string holds printable ASCII without quotes, backslashes, braces or "~".
# Everything else (segment literals [..], hash arguments k=v, block
# parameters as |x|, unknown helpers, raw blocks, inverted sections, nested
# subexpressions, non-ASCII characters) is refused.
# ---------------------------------------------------------------------------

BLOCK_HELPERS = frozenset({"if", "unless", "each", "with"})
HELPER_ARITY: dict[str, int] = {"inc": 1, "json": 1, "contains": 2, "eq": 2}
# Simple names pybars3 looks up as helpers before data: a variable of that name would call it.
_RESERVED = BLOCK_HELPERS | {"log", "lookup", "blockHelperMissing", "helperMissing", "else"}
_NAME = r"[A-Za-z][A-Za-z0-9_-]*"
_SEGMENT = rf"(?:{_NAME}|[0-9]+)"
_PATH = rf"(?:\.\./)*(?:this|@root|{_NAME})(?:\.{_SEGMENT})*|@(?:index|first|last|key)"
_STRING_CHARS = r"[ !#-&(-\[\]-z|]"
_TOKEN = re.compile(
    rf"""(?P<ws>[ \t\r\n]+)
    |(?P<lp>\()
    |(?P<rp>\))
    |(?P<str>"{_STRING_CHARS}*"|'{_STRING_CHARS}*')
    |(?P<num>-?[0-9]+)(?![A-Za-z0-9_.@/-])
    |(?P<path>(?:{_PATH}))(?![A-Za-z0-9_.@/-])""",
    re.X,
)
_PARTIAL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_BLOCK_PARAMS = re.compile(r"\bas\s*\|")
# Literal-looking prefixes pybars3 reads as a literal first: `{{inc nullable}}` would not parse.
_LITERAL_PREFIX = re.compile(r"(?:true|false|null|undefined)(?!$)")


@dataclass(frozen=True)
class _Tag:
    kind: str  # expr, raw (unescaped), comment, open, close, else, partial
    start: int
    end: int
    line: int
    body: str
    ltilde: bool = False
    rtilde: bool = False
    name: str = ""


@dataclass
class _Token:
    kind: str
    text: str
    spaced: bool  # preceded by whitespace


class _Refused(Exception):
    """A tag outside the safe grammar (turned into a TemplateError with its line)."""


def _line(source: str, pos: int) -> int:
    return source.count("\n", 0, pos) + 1


def _tokens(body: str) -> list[_Token]:
    out: list[_Token] = []
    pos, spaced = 0, False
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None:
            ch = body[pos]
            if ch == "=":
                raise _Refused("hash arguments (name=value) are not allowed")
            if ch == "[":
                raise _Refused("'[...]' path segments are not allowed")
            if ch in "\"'":
                raise _Refused("a string may not hold quotes, backslashes, braces, '~' or non-ASCII characters")
            raise _Refused(f"unexpected {_show(ch)} in {_show(body.strip())}")
        kind = m.lastgroup or ""
        if kind == "ws":
            spaced = True
        else:
            out.append(_Token(kind, m.group(), spaced))
            spaced = False
        pos = m.end()
    return out


def _show(text: str) -> str:
    if len(text) == 1 and not (text.isascii() and text.isprintable()):
        return f"character U+{ord(text):04X}"
    return repr(text if len(text) <= 40 else text[:37] + "...")


class _Args:
    """Recursive descent over one tag's tokens."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.more() else None

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def arg(self, *, nested: bool) -> str:
        """One argument; returns its kind (literal, path, subexpr)."""
        token = self.take()
        if not token.spaced:
            raise _Refused("arguments must be separated by spaces")
        if token.kind in ("str", "num"):
            return "literal"
        if token.kind == "path":
            if token.text in ("true", "false"):
                return "literal"
            if _LITERAL_PREFIX.match(token.text):
                raise _Refused(f"{token.text!r}: pybars3 reads a name starting with true/false/null/undefined as a literal")
            return "path"
        if token.kind == "lp":
            if nested:
                raise _Refused("nested subexpressions are not allowed")
            self.helper_call(inside=True)
            closing = self.peek()
            if closing is None or closing.kind != "rp":
                raise _Refused("a subexpression '(' is never closed with ')'")
            self.take()
            return "subexpr"
        raise _Refused(f"unexpected {token.text!r}")

    def helper_call(self, *, inside: bool) -> None:
        """helper arg+ (inside a subexpression when inside=True)."""
        if not self.more():
            raise _Refused("empty subexpression")
        head = self.take()
        if head.kind != "path" or head.text not in HELPER_ARITY:
            raise _Refused(f"unknown helper {head.text!r} (known: {', '.join(HELPER_ARITY)})")
        count = 0
        while self.more() and self.tokens[self.i].kind != "rp":
            self.arg(nested=inside)
            count += 1
        if count != HELPER_ARITY[head.text]:
            raise _Refused(f"helper {head.text!r} takes {HELPER_ARITY[head.text]} argument(s), got {count}")


def _check_expr(body: str) -> None:
    tokens = _tokens(body)
    if not tokens:
        raise _Refused("empty tag")
    head = tokens[0]
    if head.kind != "path":
        raise _Refused(f"a tag must start with a name, not {head.text!r}")
    if len(tokens) == 1:
        if head.text in HELPER_ARITY:
            raise _Refused(f"helper {head.text!r} takes {HELPER_ARITY[head.text]} argument(s), got 0")
        if head.text in _RESERVED:
            raise _Refused(f"{head.text!r} is a helper name, not a variable")
        return
    parser = _Args(tokens)
    # head was not preceded by whitespace inside the tag; that is allowed.
    parser.tokens[0] = _Token(head.kind, head.text, True)
    parser.helper_call(inside=False)
    if parser.more():
        raise _Refused(f"unexpected {parser.take().text!r}")


def _check_block(body: str) -> str:
    if _BLOCK_PARAMS.search(body):
        raise _Refused("block parameters (as |x|) are not supported")
    tokens = _tokens(body)
    if not tokens or tokens[0].kind != "path" or tokens[0].text not in BLOCK_HELPERS:
        shown = tokens[0].text if tokens else ""
        raise _Refused(f"unknown block helper {shown!r} (known: {', '.join(sorted(BLOCK_HELPERS))})")
    name = tokens[0].text
    parser = _Args(tokens)
    parser.i = 1
    if not parser.more():
        raise _Refused(f"'{{{{#{name}}}}}' needs one argument")
    kind = parser.arg(nested=False)
    if parser.more():
        raise _Refused(f"'{{{{#{name}}}}}' takes one argument")
    if name in ("each", "with") and kind != "path":
        raise _Refused(f"'{{{{#{name}}}}}' takes a path")
    return name


def _classify(source: str, start: int, end: int, body: str, triple: bool, known: frozenset[str] | None) -> _Tag:
    line = _line(source, start)
    ltilde = body.startswith("~")
    if ltilde:
        body = body[1:]
    rtilde = body.endswith("~")
    if rtilde:
        body = body[:-1]
    if not triple and body.startswith("!"):
        comment = body[1:]
        if comment.startswith("--") and not comment.endswith("--"):
            raise _Refused("pybars3 ends every comment at the first '}}'; a comment may not contain '}}'")
        return _Tag("comment", start, end, line, body, ltilde, rtilde)
    for ch in body:
        if not (ch.isascii() and (ch.isprintable() or ch in "\t\r\n")):
            raise _Refused(f"{_show(ch)} is not allowed in a tag")
    if triple:
        _check_expr(body)
        return _Tag("raw", start, end, line, body, ltilde, rtilde)
    sigil, rest = body[:1], body[1:]
    if sigil == "&":
        _check_expr(rest)
        return _Tag("raw", start, end, line, rest, ltilde, rtilde)
    if sigil == "#":
        return _Tag("open", start, end, line, rest, ltilde, rtilde, _check_block(rest))
    if sigil == "/":
        if rest not in BLOCK_HELPERS:
            raise _Refused(f"'{{{{/{rest}}}}}' closes no block helper (write it without spaces: {{{{/if}}}})")
        return _Tag("close", start, end, line, rest, ltilde, rtilde, rest)
    if sigil == "^":
        if rest.strip():
            raise _Refused("inverted sections ({{^x}}) are not allowed; use {{#unless x}}")
        return _Tag("else", start, end, line, body, ltilde, rtilde)
    if sigil == ">":
        name = rest.strip(" \t\r\n")
        if not _PARTIAL_NAME.fullmatch(name):
            raise _Refused(f"a partial is named by a template file name only, not {_show(name)}")
        if known is not None and name not in known:
            raise _Refused(f"unknown partial {name!r}")
        return _Tag("partial", start, end, line, rest, ltilde, rtilde, name)
    if body.strip(" \t\r\n") == "else":
        return _Tag("else", start, end, line, body, ltilde, rtilde)
    if re.match(r"[ \t\r\n]*else[ \t\r\n]", body):
        raise _Refused("'{{else if ...}}' is not supported by pybars3; put an {{#if}} inside {{else}}")
    _check_expr(body)
    return _Tag("expr", start, end, line, body, ltilde, rtilde)


def _scan(source: str, known: frozenset[str] | None = None) -> list[_Tag]:
    """Every tag of source, each checked against the safe grammar; TemplateError("line N: ...") if not."""
    tags: list[_Tag] = []
    stack: list[tuple[_Tag, bool]] = []  # open block, whether it had its else
    pos = 0
    try:
        while True:
            start = source.find("{{", pos)
            stop = len(source) if start == -1 else start
            stray = source.find("}}", pos, stop)
            if stray != -1:
                pos = stray
                raise _Refused("'}}' without an opening '{{' (a comment ends at the first '}}')")
            if start == -1:
                break
            pos = start
            if source.startswith("{{{{", start):
                raise _Refused("raw blocks ({{{{x}}}}) are not allowed")
            triple = source.startswith("{{{", start)
            body_start = start + (3 if triple else 2)
            end = source.find("}}", body_start)
            nxt = source.find("{{", body_start)
            if end == -1 or (nxt != -1 and nxt < end):
                raise _Refused("'{{' is never closed with '}}'")
            if triple and not source.startswith("}}}", end):
                raise _Refused("'{{{' is closed with '}}' instead of '}}}'")
            close = end + (3 if triple else 2)
            if len(tags) >= MAX_TAGS:
                raise _Refused(f"more than {MAX_TAGS} tags")
            tag = _classify(source, start, close, source[body_start:end], triple, known)
            if tag.kind == "open":
                stack.append((tag, False))
            elif tag.kind == "else":
                if not stack:
                    raise _Refused("'{{else}}' outside a block")
                if stack[-1][1]:
                    raise _Refused(f"a second '{{{{else}}}}' in '{{{{#{stack[-1][0].name}}}}}'")
                stack[-1] = (stack[-1][0], True)
            elif tag.kind == "close":
                if not stack:
                    raise _Refused(f"'{{{{/{tag.name}}}}}' closes no open block")
                opened, _ = stack.pop()
                if opened.name != tag.name:
                    raise _Refused(f"'{{{{/{tag.name}}}}}' closes '{{{{#{opened.name}}}}}' opened on line {opened.line}")
            tags.append(tag)
            pos = close
    except _Refused as exc:
        raise TemplateError(f"line {_line(source, pos)}: {exc}") from None
    if stack:
        opened, _ = stack[-1]
        raise TemplateError(f"line {opened.line}: '{{{{#{opened.name}}}}}' is never closed")
    return tags


def check(source: str, known: Iterable[str] | None = None) -> None:
    """Refuse a template any of whose tags is outside the safe grammar (TemplateError, with the line).

    known: the template file names a partial may name (None: any well-formed file name).
    """
    _scan(source, None if known is None else frozenset(known))


def lint(source: str) -> None:
    """check() without the partial names: unclosed tags, unbalanced blocks, unsafe expressions."""
    check(source)


def unescape_all(source: str) -> str:
    """Compile every ``{{x}}`` as ``{{{x}}}``: prompts must carry < > & " as they are."""
    out: list[str] = []
    pos = 0
    for tag in _scan(source):
        if tag.kind != "expr":
            continue
        out.append(source[pos : tag.start])
        if tag.ltilde or tag.rtilde:
            # {{~& x ~}}: pybars3 strips the whitespace the tildes ask for, which {{{~ x ~}}} would not.
            out.append("{{" + "~" * tag.ltilde + "&" + tag.body + "~" * tag.rtilde + "}}")
        else:
            out.append("{{{" + tag.body + "}}}")
        pos = tag.end
    out.append(source[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------
# The tree pybars3 parses, checked again (the code generator pastes these strings into Python)
# ---------------------------------------------------------------------------

_TREE_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*|@(?:index|first|last|key|root|_parent)|this|")
_TREE_STRING = re.compile(rf'"{_STRING_CHARS}*"|\'{_STRING_CHARS}*\'')


def _tree_path(node: Any) -> list[str]:
    if not (isinstance(node, tuple) and len(node) == 2 and node[0] == "path" and isinstance(node[1], list)):
        raise _Refused(f"unexpected path node {node!r}")
    segments = node[1]
    for segment in segments:
        if not isinstance(segment, str) or not _TREE_SEGMENT.fullmatch(segment):
            raise _Refused(f"path segment {segment!r}")
    return segments


def _tree_arg(node: Any, *, nested: bool) -> None:
    kind = node[0] if isinstance(node, tuple) and node else None
    if kind == "path":
        _tree_path(node)
    elif kind == "literalparam" and len(node) == 2:
        value = node[1]
        if isinstance(value, str):
            if not _TREE_STRING.fullmatch(value):
                raise _Refused(f"string literal {value!r}")
        elif not (isinstance(value, bool | int) and type(value) in (bool, int)):
            raise _Refused(f"literal {value!r}")
    elif kind == "subexpr" and not nested and len(node) == 3:
        name = _tree_path(node[1])
        if len(name) != 1 or name[0] not in HELPER_ARITY:
            raise _Refused(f"subexpression helper {name!r}")
        for arg in node[2]:
            _tree_arg(arg, nested=True)
    else:
        raise _Refused(f"argument {node!r}")


def _check_tree(node: Any, known: frozenset[str]) -> None:
    """Every node pybars3's code generator will paste into Python, against the safe grammar."""
    if isinstance(node, list):
        if not node or node[0] != "template":
            raise _Refused(f"unexpected node {node!r}")
        for child in node[1:]:
            _check_tree(child, known)
        return
    kind = node[0] if isinstance(node, tuple) and node else None
    if kind in ("literal", "newline", "whitespace", "comment"):
        return
    if kind in ("expand", "escapedexpand") and len(node) == 3:
        segments = _tree_path(node[1])
        if len(segments) == 1 and segments[0] in _RESERVED:
            raise _Refused(f"helper name {segments[0]!r} used as a variable")
        for arg in node[2]:
            _tree_arg(arg, nested=False)
        return
    if kind == "block" and len(node) == 5:
        if node[1] not in BLOCK_HELPERS:
            raise _Refused(f"block helper {node[1]!r}")
        for arg in node[2]:
            _tree_arg(arg, nested=False)
        _check_tree(node[3], known)
        if node[4]:
            _check_tree(node[4], known)
        return
    if kind == "partial" and len(node) == 3:
        name = node[1]
        if not (
            isinstance(name, tuple)
            and len(name) == 2
            and name[0] == "literalparam"
            and isinstance(name[1], str)
            and name[1][1:-1] in known
            and name[1] == f'"{name[1][1:-1]}"'
            and _PARTIAL_NAME.fullmatch(name[1][1:-1])
        ):
            raise _Refused(f"partial {name!r}")
        if node[2]:
            raise _Refused("partial arguments")
        return
    raise _Refused(f"{kind or 'unknown'} node")
