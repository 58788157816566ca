"""Handlebars templates (pybars3), rendered strict and without HTML escaping.

Forge renders its prompts with handlebars-rust in strict mode with escaping
off. pybars3 has neither switch, so this engine adds both: every ``{{x}}`` is
compiled as ``{{{x}}}`` (no escaping), and lookups raise on a missing
variable instead of rendering "".

Templates are data, never code. pybars3 compiles a template to Python source
and pastes path segments, helper names and literals into it unquoted (a
``{{[x') or __import__('os')...]}}`` segment runs code), and its lookups fall
back to ``getattr`` (``{{x.__class__}}``). So every tag must match a small
safe grammar before pybars3 sees it (``check``, with file and line); the tree
pybars3 parses is checked again before code is generated from it; and the
generated code resolves paths through ``_resolve``, which only indexes data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

OVERRIDE_DIR = Path(".forge") / "templates"
MAX_TEMPLATE_BYTES = 256 * 1024
# pybars3 compiles at some milliseconds per tag, under one process-wide lock: a template with
# tens of thousands of tags would stall every other compile for minutes.
MAX_TAGS = 400
# Bumped whenever the grammar or the generated code's runtime changes: old cache files are never read.
GRAMMAR_VERSION = "3"


class TemplateError(Exception):
    """A template that cannot be loaded or rendered; the message says which and why."""


class MissingVariable(LookupError):
    """Raised inside pybars when a template reads a variable the context lacks.

    A LookupError that is not a KeyError, so pybars' own lookups do not swallow it.
    """


class _Strict(dict[str, Any]):
    """A context dict that raises on a missing key instead of yielding None."""

    def __getitem__(self, key: str) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            raise MissingVariable(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self[key]


def _strict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _Strict({str(k): _strict(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


def builtin_dir() -> Path:
    """The folder of the shipped templates: inside the wheel, or the source checkout."""
    packaged = Path(str(resources.files("forge_lsp"))) / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "templates"


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


def _inc(_this: Any, value: Any) -> Any:
    return int(value) + 1


def _json(_this: Any, value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _contains(_this: Any, items: Any, value: Any) -> bool:
    try:
        return value in (items or ())
    except TypeError:
        return False


def _eq(_this: Any, left: Any, right: Any) -> bool:
    """Handlebars-rust's eq (Forge's summary frame compares a todo's status with it)."""
    return bool(left == right)


HELPERS: dict[str, Callable[..., Any]] = {"inc": _inc, "json": _json, "contains": _contains, "eq": _eq}
# pybars3's own helpers that the grammar does not offer are switched off too (None falls back to data).
_RENDER_HELPERS: dict[str, Any] = {**HELPERS, "log": None, "lookup": None}


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


# ---------------------------------------------------------------------------
# Lookups of the generated code: data only, never attributes
# ---------------------------------------------------------------------------


def _item(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        try:
            return value[name]
        except KeyError:
            raise MissingVariable(name) from None
    if isinstance(value, list | tuple):
        if name == "length":
            return len(value)
        if name.isdigit() and int(name) < len(value):
            return value[int(name)]
    # pybars3 would fall back to getattr here: str.format, __class__, ... are not data.
    raise MissingVariable(name)


def _scope_get(scope: Any, name: str) -> Any:
    specials = {"@root": scope.root, "@_parent": scope.parent, "@index": scope.index, "@key": scope.key}
    specials |= {"@first": scope.first, "@last": scope.last}
    if name in specials and (name in ("@root", "@_parent") or specials[name] is not None):
        return specials[name]
    if name == "this":
        return scope.context
    if scope.overrides and name in scope.overrides:
        return scope.overrides[name]
    return _lookup(scope.context, name)


def _lookup(value: Any, name: str) -> Any:
    from pybars import Scope

    if isinstance(value, Scope):
        return _scope_get(value, name)
    return _item(value, name)


def _resolve(context: Any, *segments: str) -> Any:
    """pybars3's resolve without its getattr fallback; a missing name raises MissingVariable."""
    from pybars import Scope

    if segments == ("",) and isinstance(context, Scope):
        return context.context
    for segment in segments:
        if context is None:
            return None
        if segment in (None, ""):
            continue
        if isinstance(context, list | tuple) and segment == "length":
            return len(context)
        context = _lookup(context, segment)
    return context


# ---------------------------------------------------------------------------
# Compiling: pybars3 under one lock, generated code cached outside the workspace
# ---------------------------------------------------------------------------

# pybars3's Compiler keeps its code builder on the class: two threads compiling at once corrupt
# each other's output ("'list' object has no attribute 'grow'"). Every compile takes this lock.
_COMPILE_LOCK = threading.Lock()
# Compiled render functions by cache key, shared by every engine of the process (reloads are free).
_MEMO: dict[str, Callable[..., Any]] = {}
_CACHE_MAGIC = "# forge-lsp template cache"


@dataclass(frozen=True)
class _Compiled:
    name: str
    origin: str
    render: Callable[..., Any]


def cache_dir() -> Path:
    """Where compiled templates are kept between runs ($XDG_CACHE_HOME/forge-lsp/templates).

    A relative XDG_CACHE_HOME is ignored (XDG says so): it would name a folder under the
    current directory, which may be the workspace.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "forge-lsp" / "templates"


def _cache_key(source: str, known: frozenset[str]) -> str:
    import pybars  # type: ignore[import-untyped]

    version = getattr(pybars, "__version__", "0")
    material = "\0".join([GRAMMAR_VERSION, version, source, *sorted(known)])
    return hashlib.sha256(material.encode()).hexdigest()


def _private_dir(folder: Path) -> bool:
    """The folder is ours: owned by this user, writable by no one else."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read_cache(path: Path, key: str) -> str | None:
    """The cached code for key, or None when absent or not ours (owner, mode, header and digest checked)."""
    if not _private_dir(path.parent):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(4 * 1024 * 1024).decode("utf-8", "replace")
    finally:
        os.close(fd)
    header, _, code = data.partition("\n")
    if header != f"{_CACHE_MAGIC} {key} {hashlib.sha256(code.encode()).hexdigest()}":
        return None
    return code


def _write_cache(path: Path, key: str, code: str) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private_dir(path.parent):
            log.debug("template cache %s is not private: not written", path.parent)
            return
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"{_CACHE_MAGIC} {key} {hashlib.sha256(code.encode()).hexdigest()}\n{code}")
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("template cache not written: %s", exc)


def _generate(source: str, known: frozenset[str]) -> tuple[str, str]:
    """pybars3's _generate_code, with the parsed tree checked before any code is generated."""
    import pybars

    compiler = pybars.Compiler()
    prepared = compiler.whitespace_control(source)
    tree, (position, _) = compiler._handlebars(prepared).apply("template")
    if position < len(prepared):
        raise TemplateError(f"line {_line(prepared, position)}: pybars3 cannot parse the template from here")
    try:
        _check_tree(tree, known)
    except _Refused as exc:
        raise TemplateError(f"outside the safe template grammar: {exc}") from None
    compiler._compiler.globals["builder"]._reset()
    container = compiler._compiler(tree).apply("compile")[0]
    return str(container.name), str(container.full_code)


def _load(code: str, name: str, filename: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - code generated from a checked tree
    namespace["resolve"] = _resolve
    return namespace[name]  # type: ignore[no-any-return]


def _build(source: str, known: frozenset[str], workspace: Path | None = None) -> Callable[..., Any]:
    """The render function of a checked source: from memory, the user's cache, or pybars3.

    pybars3 parses with PyMeta, at about a millisecond per character: the
    system prompt alone takes seconds. The generated code depends only on the
    source, the partial names, the grammar and the pybars3 version, so it is
    kept (keyed by their hash) in the user's cache folder, never in a folder
    the workspace controls.
    """
    key = _cache_key(source, known)
    with _COMPILE_LOCK:
        fn = _MEMO.get(key)
        if fn is not None:
            return fn
        folder = cache_dir()
        use_disk = workspace is None or not _inside(folder, workspace)
        path = folder / f"t{key[:40]}.py"
        code = _read_cache(path, key) if use_disk else None
        if code is not None:
            name = code.split("\n", 1)[0].removeprefix("# render: ")
            try:
                fn = _load(code, name, str(path))
            except Exception as exc:  # a damaged cache file is compiled again
                log.debug("template cache %s unusable: %s", path, exc)
                fn = None
        if fn is None:
            name, body = _generate(source, known)
            code = f"# render: {name}\n{body}"
            fn = _load(code, name, "<pybars template>")
            if use_disk:
                _write_cache(path, key, code)
        _MEMO[key] = fn
        return fn


def _inside(folder: Path, workspace: Path) -> bool:
    try:
        return folder.resolve().is_relative_to(workspace.resolve())
    except OSError:
        return True


def _compile(name: str, source: str, origin: str, known: frozenset[str], workspace: Path | None = None) -> _Compiled:
    try:
        check(source, known)
        fn = _build(unescape_all(source), known, workspace)
    except TemplateError as exc:
        raise TemplateError(f"template {name} ({origin}): {exc}") from None
    except Exception as exc:  # pybars raises PybarsError and parser errors of its own
        raise TemplateError(f"template {name} ({origin}): {exc}") from None
    return _Compiled(name, origin, fn)


class _Partials(dict[str, Callable[..., Any]]):
    """Partials by file name, compiled when a template first uses them."""

    def __init__(self, engine: TemplateEngine) -> None:
        super().__init__()
        self.engine = engine

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.engine._sources

    def __getitem__(self, key: str) -> Callable[..., Any]:
        return self.engine._get(key).render


class TemplateEngine:
    """Renders the shipped templates, with a workspace's .forge/templates/ overrides.

    Templates are checked against the safe grammar at load and compiled once,
    on first use (pybars3 compiles slowly, and most turns need only a few);
    any thread may render. An override that is refused or broken is reported
    in ``errors`` (with its file and line) and the built-in template stays in
    use. overrides=False ignores .forge/templates/ (an untrusted workspace).
    """

    def __init__(self, workspace: Path | None = None, builtin: Path | None = None, *, overrides: bool = True) -> None:
        self.errors: list[str] = []
        self._workspace = workspace
        self._sources: dict[str, tuple[str, str]] = {}
        self._builtin: dict[str, str] = {}
        self._compiled: dict[str, _Compiled] = {}
        self._partials = _Partials(self)
        # Reentrant: rendering a template compiles its partials on the same thread.
        self._lock = threading.RLock()
        for path in sorted((builtin or builtin_dir()).glob("*.md")):
            source = path.read_text(encoding="utf-8")
            self._builtin[path.name] = source
            self._sources[path.name] = (source, "built-in")
        self._known = frozenset(self._builtin)
        if workspace is not None and overrides:
            self._load_overrides(workspace)

    def _load_overrides(self, workspace: Path) -> None:
        folder = workspace / OVERRIDE_DIR
        if not folder.is_dir():
            return
        root = workspace.resolve()
        paths = sorted(folder.glob("*.md"))
        self._known = frozenset(self._builtin) | {p.name for p in paths if _PARTIAL_NAME.fullmatch(p.name)}
        for path in paths:
            origin = str(OVERRIDE_DIR / path.name)
            try:
                real = path.resolve()
                if not real.is_relative_to(root):
                    raise TemplateError(f"template {path.name}: points outside the workspace ({real})")
                if not real.is_file():
                    raise TemplateError(f"template {path.name} ({origin}): not a regular file")
                if real.stat().st_size > MAX_TEMPLATE_BYTES:
                    raise TemplateError(f"template {path.name}: larger than {MAX_TEMPLATE_BYTES} bytes")
                source = real.read_text(encoding="utf-8")
                try:
                    check(source, self._known)
                except TemplateError as exc:
                    raise TemplateError(f"template {path.name} ({origin}): {exc}") from None
                self._sources[path.name] = (source, origin)
            except (TemplateError, OSError, UnicodeDecodeError) as exc:
                self._use_builtin(path.name, str(exc) if isinstance(exc, TemplateError) else f"template {path.name}: {exc}")

    def _use_builtin(self, name: str, error: str) -> None:
        """An override failed (to load, compile or render): report it; the built-in serves from now on."""
        with self._lock:
            if name in self._builtin:
                self.errors.append(f"{error}; using the built-in template")
                log.warning("%s; using the built-in template", error)
                self._sources[name] = (self._builtin[name], "built-in")
            else:
                self.errors.append(f"{error}; not used")
                log.warning("%s; not used", error)
                self._sources.pop(name, None)
            self._compiled.pop(name, None)

    def names(self) -> list[str]:
        """Every template name the engine knows."""
        return sorted(self._sources)

    def origin(self, name: str) -> str:
        """Where a template came from: "built-in" or its override path."""
        return self._get(name).origin

    def _get(self, name: str) -> _Compiled:
        compiled = self._compiled.get(name)
        if compiled is not None:
            return compiled
        # One compile per template: a second thread waits here and reuses the first one's result.
        with self._lock:
            compiled = self._compiled.get(name)
            if compiled is not None:
                return compiled
            try:
                source, origin = self._sources[name]
            except KeyError:
                raise TemplateError(f"unknown template {name!r}") from None
            try:
                compiled = _compile(name, source, origin, self._known, self._workspace)
            except TemplateError as exc:
                if origin == "built-in":
                    raise
                # An override that checks but does not compile.
                self._use_builtin(name, str(exc))
                if name not in self._builtin:
                    raise
                compiled = _compile(name, self._builtin[name], "built-in", self._known, self._workspace)
            self._compiled[name] = compiled
            return compiled

    def render(self, name: str, context: Mapping[str, Any]) -> str:
        """Render one template; a missing variable raises TemplateError naming it.

        An override that fails to render is reported in ``errors`` and the
        built-in template renders instead, from then on.
        """
        try:
            return self._render(name, context)
        except TemplateError as exc:
            if self._sources.get(name, ("", "built-in"))[1] == "built-in" or name not in self._builtin:
                raise
            self._use_builtin(name, str(exc))
            return self._render(name, context)

    def _render(self, name: str, context: Mapping[str, Any]) -> str:
        template = self._get(name)
        try:
            return str(template.render(_strict(context), helpers=_RENDER_HELPERS, partials=self._partials))
        except MissingVariable as exc:
            raise TemplateError(f"template {name} ({template.origin}): missing variable {exc.args[0]!r}") from None
        except TemplateError:
            raise
        except RecursionError:
            raise TemplateError(f"template {name} ({template.origin}): partials include each other endlessly") from None
        except Exception as exc:
            raise TemplateError(f"template {name} ({template.origin}): {exc}") from None
