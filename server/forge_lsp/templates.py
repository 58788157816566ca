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

This module is the engine (overrides, partials, strict rendering, helpers).
The grammar lives in forge_lsp.template_grammar, compiling and its cache in
forge_lsp.template_cache; check, lint, unescape_all and cache_dir are
re-exported here.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from forge_lsp.template_cache import MissingVariable, _compile, _Compiled, cache_dir
from forge_lsp.template_grammar import _PARTIAL_NAME, TemplateError, check, lint, unescape_all
from forge_lsp.textfile import Unusable, read_text

__all__ = [
    "MAX_TEMPLATE_BYTES",
    "OVERRIDE_DIR",
    "MissingVariable",
    "TemplateEngine",
    "TemplateError",
    "builtin_dir",
    "cache_dir",
    "check",
    "lint",
    "unescape_all",
]

log = logging.getLogger(__name__)

OVERRIDE_DIR = Path(".forge") / "templates"
MAX_TEMPLATE_BYTES = 256 * 1024


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
        self._texts: dict[str, _Compiled] = {}
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
                try:  # a regular file, read without blocking (a FIFO swapped in is refused), at most the limit
                    text = read_text(real, MAX_TEMPLATE_BYTES)
                except Unusable as exc:
                    raise TemplateError(f"template {path.name} ({origin}): {exc}") from None
                if text is None:
                    raise TemplateError(f"template {path.name} ({origin}): not a regular file")
                source = text
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

    def known(self) -> frozenset[str]:
        """The template and partial names a template may include ({{> name}})."""
        return self._known

    def render_text(self, name: str, source: str, origin: str, context: Mapping[str, Any]) -> str:
        """Render a template that is not one of the engine's files (an agent's prompt), with its partials.

        The source is checked against the safe grammar like every template; TemplateError names origin.
        """
        key = f"{name}\0{origin}\0{source}"
        with self._lock:
            compiled = self._texts.get(key)
            if compiled is None:
                compiled = _compile(name, source, origin, self._known, self._workspace)
                self._texts[key] = compiled
        try:
            return str(compiled.render(_strict(context), helpers=_RENDER_HELPERS, partials=self._partials))
        except MissingVariable as exc:
            raise TemplateError(f"template {name} ({origin}): missing variable {exc.args[0]!r}") from None
        except TemplateError:
            raise
        except RecursionError:
            raise TemplateError(f"template {name} ({origin}): partials include each other endlessly") from None
        except Exception as exc:
            raise TemplateError(f"template {name} ({origin}): {exc}") from None

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
