"""attrs' generated code compiled once per user (forge_lsp/code_cache.py): the same classes, less compiling, and
a cache that is not the user's own, or not intact, is never used."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import attrs
import pytest

from forge_lsp import code_cache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return code_cache.cache_file("attrs")


def counted(make: Any) -> tuple[type, int]:
    """make() run under compiled_once, and how many times source was compiled meanwhile."""
    compiled = 0
    real = builtins.compile

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal compiled
        compiled += 1
        return real(*args, **kwargs)

    builtins.compile = counting
    try:
        with code_cache.attrs_compiled_once():
            made = make()
    finally:
        builtins.compile = real
    return made, compiled


def define() -> tuple[type, int]:
    """A fresh attrs class (a new field name: new generated source), as a first server start defines it."""
    name = f"field_{uuid.uuid4().hex[:8]}"
    return counted(lambda: attrs.make_class("Point", {name: attrs.field(), "y": attrs.field(default=2)}))


def same_source_again(cls: type) -> tuple[type, int]:
    """The same class (the same generated source) defined again: the second server start."""
    first = attrs.fields(cls)[0].name
    return counted(lambda: attrs.make_class("Point", {first: attrs.field(), "y": attrs.field(default=2)}))


def test_the_second_start_compiles_nothing_and_the_classes_are_the_same(cache: Path) -> None:
    cls, compiled = define()
    assert compiled > 0 and cache.is_file()
    assert cache.stat().st_mode & 0o777 == 0o600 and cache.parent.stat().st_mode & 0o077 == 0
    again, compiled_again = same_source_again(cls)
    assert compiled_again == 0  # every method's code came from the cache
    first = attrs.fields(cls)[0].name
    a, b = cls(**{first: 1}), again(**{first: 1})
    assert (a.y, b.y) == (2, 2) and repr(a) == repr(b) and a == cls(**{first: 1}) and a != cls(**{first: 3})
    # The hook is attrs' own again once the block ends.
    import attr._make as make

    assert make._compile_and_eval.__module__ == "attr._make"


def test_a_cache_file_that_is_not_private_or_not_intact_is_not_used(cache: Path) -> None:
    cls, _ = define()
    os.chmod(cache, 0o666)  # anyone could have written it: not loaded
    _, compiled = same_source_again(cls)
    assert compiled > 0
    cache.write_bytes(b"\x00not marshal")
    os.chmod(cache, 0o600)
    again, compiled = same_source_again(cls)
    assert compiled > 0 and again(1).y == 2  # compiled as attrs does, and the file made whole again
    _, compiled = same_source_again(cls)
    assert compiled == 0
    os.chmod(cache.parent, 0o777)  # a folder others may write to: the file in it is not the user's alone
    try:
        _, compiled = same_source_again(cls)
        assert compiled > 0
    finally:
        os.chmod(cache.parent, 0o700)


def test_a_link_in_place_of_the_cache_is_not_followed(cache: Path, tmp_path: Path) -> None:
    cls, _ = define()
    elsewhere = tmp_path / "elsewhere.marshal"
    elsewhere.write_bytes(cache.read_bytes())
    cache.unlink()
    cache.symlink_to(elsewhere)
    _, compiled = same_source_again(cls)
    assert compiled > 0


PARSES = """
import json, sys
import pymeta.runtime as runtime

parsed = []
apply = runtime.OMetaBase.apply


def counting(self, rule, *args):
    if rule == "grammar":
        parsed.append(type(self).__name__)
    return apply(self, rule, *args)


runtime.OMetaBase.apply = counting
from forge_lsp.template_cache import _pybars

pybars = _pybars()
render = pybars.Compiler().compile("{{#each items}}<{{this}}>{{/each}} {{name}}")
print(json.dumps({"parsed": parsed, "rendered": str(render({"items": ["a", "b"], "name": "x & y"}))}))
"""


def grammars(xdg: Path) -> dict[str, Any]:
    """A fresh interpreter imports pybars3 as the templates do: the grammars it parsed, and a template rendered."""
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}
    out = subprocess.run([sys.executable, "-c", PARSES], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_pymetas_and_pybars_grammars_are_parsed_once_per_user(tmp_path: Path) -> None:
    first = grammars(tmp_path / "cache")
    # PyMeta's own three grammars (the boot metagrammar parses them) and pybars3's two.
    assert len(first["parsed"]) == 5 and first["rendered"] == "<a><b> x &amp; y"
    cache = tmp_path / "cache" / "forge-lsp" / f"grammars-{sys.implementation.cache_tag}.marshal"
    assert cache.stat().st_mode & 0o777 == 0o600
    again = grammars(tmp_path / "cache")
    assert again == {"parsed": [], "rendered": first["rendered"]}
    cache.write_bytes(b"damaged")
    assert grammars(tmp_path / "cache") == first  # parsed again, the same


CLASSES = """
import attrs
from forge_lsp.code_cache import attrs_compiled_once

with attrs_compiled_once():
    plain = attrs.make_class("Plain", {"a": attrs.field()})
    frozen = attrs.make_class("Frozen", {"a": attrs.field(), "b": attrs.field()}, frozen=True)
assert hash(frozen(1, 2)) == hash(frozen(1, 2)) and frozen(1, 2) == frozen(1, 2) != frozen(1, 3) and plain(1) == plain(1)
"""


def test_a_start_that_finds_everything_writes_nothing(cache: Path) -> None:
    # A frozen class's __hash__ holds a salt of the process's string hashes (PYTHONHASHSEED): it differs at every
    # start, and must not make every start rewrite (and grow) the cache.
    def start(seed: str) -> None:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", CLASSES], env=env, check=True, capture_output=True)

    start("1")
    written = cache.read_bytes()
    os.utime(cache, ns=(1, 1))
    start("2")
    assert cache.stat().st_mtime_ns == 1 and cache.read_bytes() == written
