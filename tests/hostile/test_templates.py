"""Hostile workspaces against the template engine: a .forge/templates/ override is an attacker's file.

pybars3 compiles a template to Python and pastes path segments, helper names
and literals into it: each attack below ran code inside the server on the old
main (the canary file appeared, or the builtins global was set). Each must now
be refused at load, with the file and the line, and the built-in template must
stay in force. The payloads only touch a file under the test's tmp_path.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from forge_lsp import template_cache, templates
from forge_lsp.domain.template_names import RETRY_MESSAGE, SYSTEM_PROMPT
from forge_lsp.templates import TemplateEngine, TemplateError, cache_dir

pytestmark = pytest.mark.timeout(120)

Record = Callable[[str, str, str], None]
CONTEXT = {
    "env": {"os": "Linux", "cwd": "/w", "shell": "bash", "date": "2026-12-03"},
    "tool_names": ["read", "shell"],
    "custom_instructions": None,
    "attempts_left": 1,
    "allowed_max_attempts": 3,
}
GLOBAL = "FORGE_TEMPLATE_PWNED"
OVERRIDE = ".forge/templates/forge-system-prompt.md"


def code(canary: Path) -> str:
    """Python that leaves both traces: the canary file and a builtins global."""
    return f"__import__('pathlib').Path({str(canary)!r}).touch() or setattr(__import__('builtins'), {GLOBAL!r}, 1)"


def sq(canary: Path) -> str:
    """Breaks out of pybars3's u'...' (path segments in resolve(context, u'...'))."""
    # custom_instructions is None in CONTEXT: the strict lookup succeeds and the or-chain runs on.
    return f"custom_instructions') or {code(canary)} or ('y"


def dq(canary: Path) -> str:
    """Breaks out of pybars3's "..." (subexpression helper names)."""
    return f'x", {code(canary)}, "y'


def fullwidth(canary: Path) -> str:
    # Python folds fullwidth letters in identifiers (NFKC): __ｉｍｐｏｒｔ__ is __import__.
    return sq(canary).replace("__import__", "__ｉｍｐｏｒｔ__")


def at(shape: str, payload: Callable[[Path], str]) -> Callable[[Path], str]:
    """The attack template: shape with its @@ replaced by the payload for a canary path."""
    return lambda canary: shape.replace("@@", payload(canary))


ATTACKS: dict[str, Callable[[Path], str]] = {
    "a [...] path segment": at("{{[@@]}}", sq),
    "a [...] segment in a dotted path": at("{{env.[@@]}}", sq),
    "a [...] segment after ../": at("{{#with env}}{{../[os') and (@@) and ('y]}}{{/with}}", code),
    "triple-stash {{{ }}}": at("{{{[@@]}}}", sq),
    "{{& }} unescaped": at("{{& [@@]}}", sq),
    "a helper argument": at("{{inc [@@]}}", sq),
    "a hash argument": at("{{inc 1 kk=[@@]}}", sq),
    "a block helper argument": at("{{#if [@@]}}x{{/if}}", sq),
    "a subexpression helper name": at("{{#if ([@@])}}x{{/if}}", dq),
    "a partial named by a subexpression": at("{{> ([@@]) }}", dq),
    "a partial hash argument": at("{{> forge-partial-system-info.md kk=[@@]}}", sq),
    "whitespace control {{~ ~}}": at("{{~[@@]~}}", sq),
    "a comment containing }}": at("{{!-- }} {{[@@]}} --}}", sq),
    "fullwidth identifiers (unicode folding)": at("{{[@@]}}", fullwidth),
    "an inverted block": at("{{^if [@@]}}x{{/if}}", sq),
    "{{else if}}": at("{{#if custom_instructions}}{{else if [@@]}}{{/if}}", sq),
    "block parameters as |x|": at("{{#each tool_names as |[@@]|}}{{/each}}", sq),
    "a quoted string with escapes": at('{{inc "a\\" + str(@@) + \\"b"}}', code),
    "a dunder path (getattr traversal)": lambda _c: "{{env.__class__.__init__.__globals__}}",
    "an unknown helper": lambda _c: '{{lookup env "os"}}',
    "a partial outside the template folder": lambda _c: "{{> ../../../etc/passwd }}",
    "a homoglyph block helper": lambda _c: "{{#іf custom_instructions}}x{{/іf}}",  # Cyrillic і
    "a no-break space in a tag": lambda _c: "{{\u00a0custom_instructions}}",
}


@pytest.fixture(autouse=True)
def _no_global() -> Iterator[None]:
    yield
    if hasattr(builtins, GLOBAL):
        delattr(builtins, GLOBAL)


def write_override(workspace: Path, source: str, name: str = SYSTEM_PROMPT) -> None:
    folder = workspace / ".forge" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(source, encoding="utf-8")


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_template_override_cannot_run_code(workspace: Path, tmp_path: Path, attack: str, record_reliability: Record) -> None:
    canary = tmp_path / "pwned"
    # The attack sits on line 3, below lines that are fine.
    write_override(workspace, "You are helpful.\n{{> forge-partial-system-info.md }}\n" + ATTACKS[attack](canary) + "\n")
    engine = TemplateEngine(workspace)
    out = engine.render(SYSTEM_PROMPT, CONTEXT)
    assert not canary.exists(), "the template ran code"
    assert not hasattr(builtins, GLOBAL), "the template ran code"
    assert out.startswith("You are Forge"), "the built-in system prompt must stay in force"
    assert engine.origin(SYSTEM_PROMPT) == "built-in"
    assert len(engine.errors) == 1, engine.errors
    assert OVERRIDE in engine.errors[0] and "line 3:" in engine.errors[0], engine.errors[0]
    record_reliability(
        f"attack: template override with {attack}",
        f"{OVERRIDE} whose line 3 tries to run Python through {attack}",
        "refused at load naming file and line; built-in template used; nothing ran",
    )


@pytest.mark.parametrize(
    "attack",
    [name for name in ATTACKS if "[" in ATTACKS[name](Path("/x")) and "as |" not in ATTACKS[name](Path("/x"))],
)
def test_pybars_tree_is_checked_even_if_the_tag_scanner_missed_it(tmp_path: Path, attack: str) -> None:
    # Defence in depth: what pybars3 itself parses is checked before any code is generated.
    canary = tmp_path / "pwned"
    known = frozenset({"forge-partial-system-info.md"})
    try:
        fn = template_cache._build(ATTACKS[attack](canary), known)
    except TemplateError:
        pass
    else:
        with pytest.raises(Exception):  # noqa: B017 - whatever it raises, it must not run the payload
            fn(templates._strict(CONTEXT), helpers=templates._RENDER_HELPERS, partials={})
    assert not canary.exists() and not hasattr(builtins, GLOBAL)


def test_lookups_never_reach_attributes(workspace: Path) -> None:
    # pybars3 falls back to getattr: {{attempts_left.real}} rendered int.real, {{x.upper}} called str.upper.
    write_override(workspace, "{{attempts_left.real}} {{allowed_max_attempts}}", RETRY_MESSAGE)
    engine = TemplateEngine(workspace)
    out = engine.render(RETRY_MESSAGE, CONTEXT)
    assert out.startswith("Tool call failed")
    assert "missing variable 'real'" in engine.errors[0]


def test_overrides_false_ignores_the_template_folder(workspace: Path) -> None:
    write_override(workspace, "Failed. {{attempts_left}} left.", RETRY_MESSAGE)
    assert TemplateEngine(workspace).render(RETRY_MESSAGE, CONTEXT) == "Failed. 1 left."
    engine = TemplateEngine(workspace, overrides=False)
    assert engine.render(RETRY_MESSAGE, CONTEXT).startswith("Tool call failed")
    assert engine.origin(RETRY_MESSAGE) == "built-in" and engine.errors == []


# --- the on-disk cache of generated code ---------------------------------------------------------


def poison(path: Path, source: str, canary: Path, *, header: bool) -> None:
    """A cache file at source's key whose code leaves the canary; with header=True it even carries our header."""
    body = f"# render: render\n{code(canary)}\ndef render(*args, **kwargs):\n    return 'poisoned'\n"
    if header:
        key = template_cache._cache_key(source, KNOWN)
        body = f"{template_cache._CACHE_MAGIC} {key} {hashlib.sha256(body.encode()).hexdigest()}\n{body}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


SOURCE = "cache test {{{attempts_left}}} of {{{allowed_max_attempts}}} NONCE"
KNOWN = frozenset({"t.md"})


def cache_file(nonce: str) -> tuple[str, Path]:
    source = SOURCE.replace("NONCE", nonce)
    return source, cache_dir() / f"t{template_cache._cache_key(source, KNOWN)[:40]}.py"


def builtin_with(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / "builtin"
    folder.mkdir(exist_ok=True)
    (folder / "t.md").write_text(source.replace("{{{", "{{").replace("}}}", "}}"))
    return folder


def test_cache_file_not_written_by_us_is_not_executed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_reliability: Record
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    canary = tmp_path / "pwned"
    source, path = cache_file("a1")
    poison(path, source, canary, header=False)  # what the old engine wrote, and exec'd on a key match
    engine = TemplateEngine(builtin=builtin_with(tmp_path, source))
    assert engine.render("t.md", CONTEXT) == "cache test 1 of 3 a1"
    assert not canary.exists() and not hasattr(builtins, GLOBAL)
    assert path.read_text().startswith(template_cache._CACHE_MAGIC)  # replaced by our own
    record_reliability(
        "attack: poisoned template cache file",
        "a cache file of generated code not written by forge-lsp, at the key of a real template",
        "not executed; compiled again",
    )


def test_cache_in_a_folder_others_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    canary = tmp_path / "pwned"
    source, path = cache_file("b2")
    poison(path, source, canary, header=True)
    path.parent.chmod(0o777)
    engine = TemplateEngine(builtin=builtin_with(tmp_path, source))
    assert engine.render("t.md", CONTEXT) == "cache test 1 of 3 b2"
    assert not canary.exists() and not hasattr(builtins, GLOBAL)


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")
def test_cache_file_owned_by_another_user_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    canary = tmp_path / "pwned"
    source, path = cache_file("c3")
    poison(path, source, canary, header=True)
    path.parent.chmod(0o700)
    os.chown(path, 12345, 12345)
    engine = TemplateEngine(builtin=builtin_with(tmp_path, source))
    assert engine.render("t.md", CONTEXT) == "cache test 1 of 3 c3"
    assert not canary.exists() and not hasattr(builtins, GLOBAL)


def test_cache_never_lives_in_the_workspace(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_reliability: Record
) -> None:
    canary = tmp_path / "pwned"
    # A relative XDG_CACHE_HOME would name a folder under the current directory: ignored.
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("XDG_CACHE_HOME", ".cache")
    assert not cache_dir().resolve().is_relative_to(workspace.resolve())
    # An absolute one inside the workspace: the engine of that workspace neither reads nor writes it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(workspace / ".cache"))
    source, path = cache_file("d4")
    poison(path, source, canary, header=True)
    path.parent.chmod(0o700)
    write_override(workspace, source.replace("{{{", "{{").replace("}}}", "}}"), "t.md")
    before = sorted(p.name for p in path.parent.iterdir())
    engine = TemplateEngine(workspace, builtin=builtin_with(tmp_path, "unused {{attempts_left}}"))
    assert engine.render("t.md", CONTEXT) == "cache test 1 of 3 d4"
    assert not canary.exists() and not hasattr(builtins, GLOBAL)
    assert sorted(p.name for p in path.parent.iterdir()) == before
    record_reliability(
        "attack: template cache inside the workspace",
        "XDG_CACHE_HOME relative, or pointing into the workspace, with a poisoned cache file there",
        "cache folder outside the workspace; a cache inside it is neither read nor written",
    )


def test_cache_written_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source, path = cache_file("e5")
    TemplateEngine(builtin=builtin_with(tmp_path, source)).render("t.md", CONTEXT)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# --- thread safety (issue 10) --------------------------------------------------------------------


def test_one_compile_per_template_under_concurrent_renders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "t.md").write_text("once {{attempts_left}} " + os.urandom(8).hex())
    calls: list[str] = []
    real = template_cache._generate

    def counting(source: str, known: frozenset[str]) -> tuple[str, str]:
        calls.append(source)
        return real(source, known)

    monkeypatch.setattr(template_cache, "_generate", counting)
    engine = TemplateEngine(builtin=tmp_path / "b")
    barrier = threading.Barrier(8)
    outs: list[str] = []

    def work() -> None:
        barrier.wait()
        outs.append(engine.render("t.md", CONTEXT))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outs) == 8 and len(set(outs)) == 1
    assert len(calls) == 1
