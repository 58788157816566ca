"""Handlebars templates (pybars3), rendered strict and without HTML escaping.

Forge renders its prompts with handlebars-rust in strict mode with escaping
off. pybars3 has neither switch, so this engine adds both: every ``{{x}}`` is
compiled as ``{{{x}}}`` (no escaping), and the context is wrapped so that a
missing variable raises instead of rendering "". Templates are linted before
compiling, because pybars3 silently drops everything after an unclosed ``{{``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

RETRY_MESSAGE = "forge-tool-retry-message.md"
ERROR_REFLECTION = "forge-partial-tool-error-reflection.md"
DOOM_LOOP_REMINDER = "forge-doom-loop-reminder.md"
PENDING_TODOS_REMINDER = "forge-pending-todos-reminder.md"
SUMMARY_FRAME = "forge-partial-summary-frame.md"
SYSTEM_INFO = "forge-partial-system-info.md"
SYSTEM_PROMPT = "forge-system-prompt.md"
OVERRIDE_DIR = Path(".forge") / "templates"
MAX_TEMPLATE_BYTES = 256 * 1024


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


_TAG = re.compile(r"\{\{(\{?)(.*?)\}?\}\}", re.S)
_ESCAPED = re.compile(r"(?<!\{)\{\{(?![{#/>^!&~])(?!else\b)(?!\s*else\s*\}\})(.*?)\}\}(?!\})", re.S)
_BLOCK_OPEN = re.compile(r"^[#^]\s*([\w.-]+)")
_BLOCK_CLOSE = re.compile(r"^/\s*([\w.-]+)\s*$")


def lint(source: str) -> None:
    """Reject what pybars3 would render wrongly without an error: unclosed tags, unbalanced blocks."""
    stack: list[tuple[str, int]] = []
    pos = 0
    while (start := source.find("{{", pos)) != -1:
        line = source.count("\n", 0, start) + 1
        end = source.find("}}", start + 2)
        nxt = source.find("{{", start + 2)
        if source.startswith("{{{", start):
            nxt = source.find("{{", start + 3)
        if end == -1 or (nxt != -1 and nxt < end):
            raise TemplateError(f"line {line}: '{{{{' is never closed with '}}}}'")
        inner = source[start + 2 : end].strip("{}~ \t\r\n")
        if source.startswith("{{!", start):
            pass
        elif m := _BLOCK_OPEN.match(inner):
            stack.append((m.group(1), line))
        elif m := _BLOCK_CLOSE.match(inner):
            if not stack:
                raise TemplateError(f"line {line}: '{{{{/{m.group(1)}}}}}' closes no open block")
            name, opened = stack.pop()
            if name != m.group(1):
                raise TemplateError(f"line {line}: '{{{{/{m.group(1)}}}}}' closes '{{{{#{name}}}}}' opened on line {opened}")
        elif inner == "else" and not stack:
            raise TemplateError(f"line {line}: '{{{{else}}}}' outside a block")
        pos = end + 2
        if source.startswith("}", pos) and source.startswith("{{{", start):
            pos += 1
    if stack:
        name, opened = stack[-1]
        raise TemplateError(f"line {opened}: '{{{{#{name}}}}}' is never closed")


def unescape_all(source: str) -> str:
    """Compile every ``{{x}}`` as ``{{{x}}}``: prompts must carry < > & " as they are."""
    return _ESCAPED.sub(lambda m: "{{{" + m.group(1) + "}}}", source)


def _inc(_this: Any, value: Any) -> Any:
    return int(value) + 1


def _json(_this: Any, value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _contains(_this: Any, items: Any, value: Any) -> bool:
    try:
        return value in (items or ())
    except TypeError:
        return False


HELPERS: dict[str, Callable[..., Any]] = {"inc": _inc, "json": _json, "contains": _contains}


@dataclass(frozen=True)
class _Compiled:
    name: str
    origin: str
    render: Callable[..., Any]


def cache_dir() -> Path:
    """Where compiled templates are kept between runs ($XDG_CACHE_HOME/forge-lsp/templates)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "forge-lsp" / "templates"


def _build(source: str) -> Callable[..., Any]:
    """pybars3's compile, with its generated Python cached on disk.

    pybars3 parses with PyMeta, at about a millisecond per character: the
    system prompt alone takes seconds. The generated code depends only on the
    source and the pybars3 version, so it is kept and reused.
    """
    import pybars  # type: ignore[import-untyped]

    version = getattr(pybars, "__version__", "0")
    key = hashlib.sha256(f"{version}\0{source}".encode()).hexdigest()[:32]
    path = cache_dir() / f"t{key}.py"
    namespace: dict[str, Any] = {}
    try:
        code = path.read_text(encoding="utf-8")
        name = code.split("\n", 1)[0].removeprefix("# render: ")
        exec(compile(code, str(path), "exec", dont_inherit=True), namespace)  # noqa: S102 - code pybars3 generated here
        return namespace[name]  # type: ignore[no-any-return]
    except (OSError, KeyError, SyntaxError, ValueError):
        pass
    container = pybars.Compiler()._generate_code(source)
    code = f"# render: {container.name}\n{container.full_code}"
    exec(compile(code, "<pybars template>", "exec", dont_inherit=True), namespace)  # noqa: S102
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(code, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("template cache not written: %s", exc)
    return namespace[container.name]  # type: ignore[no-any-return]


def _compile(name: str, source: str, origin: str) -> _Compiled:
    try:
        lint(source)
        fn = _build(unescape_all(source))
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

    Templates are linted at load and compiled once, on first use (pybars3
    compiles slowly, and most turns need only a few). A malformed override is
    reported in ``errors`` and the built-in template stays in use.
    """

    def __init__(self, workspace: Path | None = None, builtin: Path | None = None) -> None:
        self.errors: list[str] = []
        self._sources: dict[str, tuple[str, str]] = {}
        self._builtin: dict[str, str] = {}
        self._compiled: dict[str, _Compiled] = {}
        self._partials = _Partials(self)
        for path in sorted((builtin or builtin_dir()).glob("*.md")):
            source = path.read_text(encoding="utf-8")
            self._builtin[path.name] = source
            self._sources[path.name] = (source, "built-in")
        if workspace is not None:
            self._load_overrides(workspace)

    def _load_overrides(self, workspace: Path) -> None:
        folder = workspace / OVERRIDE_DIR
        if not folder.is_dir():
            return
        root = workspace.resolve()
        for path in sorted(folder.glob("*.md")):
            try:
                real = path.resolve()
                if not real.is_relative_to(root):
                    raise TemplateError(f"template {path.name}: points outside the workspace ({real})")
                if real.stat().st_size > MAX_TEMPLATE_BYTES:
                    raise TemplateError(f"template {path.name}: larger than {MAX_TEMPLATE_BYTES} bytes")
                source = real.read_text(encoding="utf-8")
                origin = str(OVERRIDE_DIR / path.name)
                try:
                    lint(source)
                except TemplateError as exc:
                    raise TemplateError(f"template {path.name} ({origin}): {exc}") from None
                self._sources[path.name] = (source, origin)
            except (TemplateError, OSError, UnicodeDecodeError) as exc:
                self._use_builtin(path.name, str(exc) if isinstance(exc, TemplateError) else f"template {path.name}: {exc}")

    def _use_builtin(self, name: str, error: str) -> None:
        """An override failed (to load, compile or render): report it; the built-in serves from now on."""
        self.errors.append(f"{error}; using the built-in template")
        log.warning("%s; using the built-in template", error)
        if name in self._builtin:
            self._sources[name] = (self._builtin[name], "built-in")
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
        try:
            source, origin = self._sources[name]
        except KeyError:
            raise TemplateError(f"unknown template {name!r}") from None
        try:
            compiled = _compile(name, source, origin)
        except TemplateError as exc:
            if origin == "built-in":
                raise
            # An override that lints but does not compile.
            self._use_builtin(name, str(exc))
            compiled = _compile(name, self._builtin[name], "built-in")
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
            if self._sources.get(name, ("", "built-in"))[1] == "built-in":
                raise
            self._use_builtin(name, str(exc))
            return self._render(name, context)

    def _render(self, name: str, context: Mapping[str, Any]) -> str:
        template = self._get(name)
        try:
            return str(template.render(_strict(context), helpers=HELPERS, partials=self._partials))
        except MissingVariable as exc:
            raise TemplateError(f"template {name} ({template.origin}): missing variable {exc.args[0]!r}") from None
        except TemplateError:
            raise
        except Exception as exc:
            raise TemplateError(f"template {name} ({template.origin}): {exc}") from None
