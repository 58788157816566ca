"""Compiling templates: pybars3 under one lock, generated code cached outside the workspace.

The generated code resolves paths through ``_resolve``, which only indexes
data (pybars3's own lookups fall back to ``getattr``: ``{{x.__class__}}``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge_lsp.template_grammar import GRAMMAR_VERSION, TemplateError, _check_tree, _line, _Refused, check, unescape_all
from forge_lsp.userfiles import private_dir

log = logging.getLogger(__name__)


class MissingVariable(LookupError):
    """Raised inside pybars when a template reads a variable the context lacks.

    A LookupError that is not a KeyError, so pybars' own lookups do not swallow it.
    """


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


_IMPORT_LOCK = threading.Lock()
"""One thread at a time imports pybars3 under the grammar cache's hooks (two would restore each other's)."""


def _pybars() -> Any:
    """pybars3, its grammars (parsed as it is imported) from the user's cache (code_cache.py)."""
    from forge_lsp.code_cache import grammars_parsed_once

    with _IMPORT_LOCK, grammars_parsed_once():
        import pybars  # type: ignore[import-untyped]
    return pybars


def _cache_key(source: str, known: frozenset[str]) -> str:
    pybars = _pybars()
    version = getattr(pybars, "__version__", "0")
    material = "\0".join([GRAMMAR_VERSION, version, source, *sorted(known)])
    return hashlib.sha256(material.encode()).hexdigest()


def _read_cache(path: Path, key: str) -> str | None:
    """The cached code for key, or None when absent or not ours (owner, mode, header and digest checked)."""
    if not private_dir(path.parent):
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
        if not private_dir(path.parent):
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
