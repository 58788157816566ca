"""Code the libraries generate as they are imported, made once per user instead of at every start.

Two libraries spend most of a start making code from text that never changes:

- lsprotocol.types defines ~570 attrs classes, and attrs writes and compiles the source of each one's
  __init__, __eq__, __repr__... (~765 compiles: about 40% of the language server's start, 0.3 s of a core).
- pybars3 (the templates) builds its two grammars with PyMeta, and PyMeta its own three, as they are imported:
  each grammar's text parsed at about a millisecond per character into Python source (0.4-0.9 s of a core,
  most of a `forge-lsp run` that renders its prompt from cached templates).

The same text always gives the same code, so while those imports run (attrs_compiled_once,
grammars_parsed_once), the step looks it up first in $XDG_CACHE_HOME/forge-lsp/<what>-<python>.marshal: a
dict from the text to what it made (the compiled code object; a grammar's generated source), as Python's
own __pycache__ keeps compiled modules. A file is used only if it is the user's and private (its folder
too, as the template cache's), and written (atomically) only when something was missing from it. Anything
unexpected (another attrs or PyMeta without those steps, an unreadable or malformed file) is the library's
own way: the cache only ever saves time.
"""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import stat
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from forge_lsp.userfiles import private_dir

log = logging.getLogger(__name__)

MAX_BYTES = 32 * 1024 * 1024
MAX_ENTRIES = 20_000
"""A cache grown past this (many upgrades of the library) starts again from what this start used."""


def cache_file(what: str) -> Path:
    """$XDG_CACHE_HOME/forge-lsp/<what>-<cache tag>.marshal (marshal's format is the interpreter's own)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "forge-lsp" / f"{what}-{sys.implementation.cache_tag}.marshal"


class _Store:
    """One cache file's entries: those read, and those this start used (written back when one was missing)."""

    def __init__(self, what: str) -> None:
        self.path = cache_file(what)
        self.entries = _read(self.path)
        self.used: dict[Any, Any] = {}
        self.missing = False

    def get(self, key: Any, kind: type) -> Any:
        value = self.entries.get(key)
        if not isinstance(value, kind):
            return None
        self.used[key] = value
        return value

    def put(self, key: Any, value: Any) -> None:
        self.used[key] = value
        self.missing = True

    def save(self) -> None:
        if self.missing:
            both = {**self.entries, **self.used}
            _write(self.path, both if len(both) <= MAX_ENTRIES else self.used)


def _read(path: Path) -> dict[Any, Any]:
    if not private_dir(path.parent):
        return {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return {}
        if st.st_size > MAX_BYTES:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as f:
            loaded = marshal.loads(f.read())
    except (OSError, ValueError, EOFError, TypeError) as exc:
        log.debug("code cache %s not used: %s", path, exc)
        return {}
    finally:
        os.close(fd)
    return loaded if isinstance(loaded, dict) else {}


def _write(path: Path, entries: dict[Any, Any]) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(path.parent):
            return
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(entries))
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        log.debug("code cache not written: %s", exc)


def _compiler(store: _Store) -> Callable[..., Any]:
    """compile(source, filename, "exec") that takes the code from store when it has it."""

    def compiled(source: str, filename: str, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or mode != "exec" or not isinstance(source, str):
            return compile(source, filename, mode, *args, **kwargs)
        key = ("compile", filename, source)
        code = store.get(key, types.CodeType)
        if code is None:
            code = compile(source, filename, "exec")
            store.put(key, code)
        return code

    return compiled


@contextlib.contextmanager
def attrs_compiled_once() -> Iterator[None]:
    """While the block runs (importing lsprotocol), attrs' generated code comes from the user's cache."""
    try:
        import attr._make as make
    except ImportError:
        yield
        return
    compile_and_eval = getattr(make, "_compile_and_eval", None)
    if not callable(compile_and_eval):
        yield
        return
    store = _Store("attrs")
    compiled = _compiler(store)

    def cached(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        # A hashable class's __hash__ source holds a salt from this process's string hashes (PYTHONHASHSEED):
        # different at every start, so never found again. It is compiled here, as attrs would.
        code = compile(script, filename, "exec") if "def __hash__" in script else compiled(script, filename, "exec")
        eval(code, globs, locs)  # noqa: S307 - attrs' own generated source, as attrs evaluates it

    make._compile_and_eval = cached
    try:
        yield
    finally:
        make._compile_and_eval = compile_and_eval
        store.save()


class _Parsed:
    """A grammar the cache had: its generated Python source, in place of the tree PyMeta would have parsed."""

    def __init__(self, source: str) -> None:
        self.source = source


@contextlib.contextmanager
def grammars_parsed_once() -> Iterator[None]:
    """While the block runs (importing pybars), PyMeta's grammars come from the user's cache: parsed, written
    out as Python and compiled once. PyMeta's own grammars are made as pymeta.grammar is imported, here."""
    try:
        import pymeta.boot as boot  # type: ignore[import-untyped]
        import pymeta.builder as builder  # type: ignore[import-untyped]
    except ImportError:
        yield
        return
    if "pymeta.grammar" in sys.modules and "pybars._compiler" in sys.modules:
        yield  # made already, in this process
        return
    write_python = getattr(builder, "writePython", None)
    parsers = [getattr(boot, "BootOMetaGrammar", None)]
    if not callable(write_python) or not all(callable(getattr(p, "parseGrammar", None)) for p in parsers):
        yield
        return
    store = _Store("grammars")
    trees: dict[int, Any] = {}
    """id(tree) -> the grammar it was parsed from (a tree parsed here, to keep its source)."""
    restore: list[Callable[[], None]] = []

    def hook_parse(cls: Any) -> None:
        parse = cls.__dict__.get("parseGrammar")
        if parse is None:
            return

        def parsed(self: Any, name: str, *args: Any) -> Any:
            data = getattr(getattr(self, "input", None), "data", None)
            if not isinstance(data, list) or getattr(self.input, "position", None) != 0:
                return parse(self, name, *args)
            key = ("grammar", type(self).__name__, name, "".join(data), repr(args))
            source = store.get(key, str)
            if source is not None:
                return _Parsed(source)
            tree = parse(self, name, *args)
            trees[id(tree)] = (key, tree)
            return tree

        cls.parseGrammar = parsed
        restore.append(lambda: setattr(cls, "parseGrammar", parse))

    def written(tree: Any) -> str:
        if isinstance(tree, _Parsed):
            return tree.source
        source = write_python(tree)
        made = trees.pop(id(tree), None)
        if made is not None and made[1] is tree and isinstance(source, str):
            store.put(made[0], source)
        return source  # type: ignore[no-any-return]

    hooked: set[Any] = set()

    def hook_parser(cls: Any) -> None:
        """The class whose parseGrammar cls parses grammars with, hooked (once)."""
        for klass in cls.__mro__:
            if "parseGrammar" in klass.__dict__:
                if klass not in hooked:
                    hooked.add(klass)
                    hook_parse(klass)
                return

    hook_parser(parsers[0])
    # The metagrammars pymeta.grammar makes as it is imported (OMetaGrammar, OMeta2Grammar) parse the grammars
    # made after them there and in pybars3: each is hooked as it is made.
    base = boot.OMetaBase if hasattr(boot, "OMetaBase") else None
    if base is not None and "__init_subclass__" not in base.__dict__:
        base.__init_subclass__ = classmethod(lambda cls, **kwargs: hook_parser(cls))
        restore.append(lambda: delattr(base, "__init_subclass__"))
    builder.writePython = written
    builder.compile = _compiler(store)  # moduleFromGrammar's compile of the generated source
    try:
        import pymeta.grammar  # type: ignore[import-untyped]  # noqa: F401 - its grammars are made here

        yield
    finally:
        builder.writePython = write_python
        with contextlib.suppress(AttributeError):
            del builder.compile
        for undo in restore:
            undo()
        store.save()
