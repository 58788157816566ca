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
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from forge_lsp.template_grammar import (
    _PARTIAL_NAME,
    GRAMMAR_VERSION,
    TemplateError,
    _check_tree,
    _line,
    _Refused,
    check,
    lint,
    unescape_all,
)

__all__ = ["MissingVariable", "TemplateEngine", "TemplateError", "builtin_dir", "cache_dir", "check", "lint", "unescape_all"]

log = logging.getLogger(__name__)

OVERRIDE_DIR = Path(".forge") / "templates"
MAX_TEMPLATE_BYTES = 256 * 1024


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
