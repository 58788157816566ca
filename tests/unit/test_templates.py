"""TemplateEngine: byte-exact retry notice, strict, unescaped, helpers, partials, overrides."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from forge_lsp.domain.template_names import RETRY_MESSAGE
from forge_lsp.templates import TemplateEngine, TemplateError, builtin_dir, check, lint, unescape_all

EXPECTED_RETRY_FILE = (
    b"Tool call failed\n- **Attempts remaining:** {{attempts_left}}\n"
    b"- **Next steps:** Analyze the error, identify the root cause, and adjust your approach before retrying."
)


def test_retry_template_is_byte_exact() -> None:
    assert (builtin_dir() / RETRY_MESSAGE).read_bytes() == EXPECTED_RETRY_FILE


def test_retry_notice_renders() -> None:
    out = TemplateEngine().render(RETRY_MESSAGE, {"attempts_left": 2, "allowed_max_attempts": 3})
    assert out == EXPECTED_RETRY_FILE.decode().replace("{{attempts_left}}", "2")


def test_missing_variable_names_it_and_the_template() -> None:
    with pytest.raises(TemplateError, match=r"forge-tool-retry-message.md .*missing variable 'attempts_left'"):
        TemplateEngine().render(RETRY_MESSAGE, {"allowed_max_attempts": 3})


def test_no_html_escaping(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("[{{x}}] [{{{x}}}] {{#each xs}}<{{this}}>{{/each}}")
    text = """a < b && c > "d" 'e' `f`"""
    assert TemplateEngine(builtin=tmp_path).render("t.md", {"x": text, "xs": ["<&>"]}) == f"[{text}] [{text}] <<&>>"


def test_helpers_inc_json_contains(tmp_path: Path) -> None:
    (tmp_path / "h.md").write_text(
        '{{#each xs}}{{inc @index}}={{this}};{{/each}} {{json obj}} {{#if (contains tags "b")}}has-b{{else}}no-b{{/if}}'
    )
    out = TemplateEngine(builtin=tmp_path).render("h.md", {"xs": ["a", "b"], "obj": {"k": [1, "<"]}, "tags": ["a", "b"]})
    assert out == '1=a;2=b; {"k": [1, "<"]} has-b'


def test_partials_by_file_name() -> None:
    engine = TemplateEngine()
    env = {"os": "Linux", "cwd": "/w", "shell": "bash", "date": "2026-12-02"}
    context = {"env": env, "tool_names": ["read", "shell"], "custom_instructions": None}
    out = engine.render("forge-workspace-context.md", {**context, "system_info": True})
    assert "<current_working_directory>/w</current_working_directory>" in out
    assert "Available tools: read, shell." in engine.render("forge-system-prompt.md", context)


def test_strict_inside_each_scope(tmp_path: Path) -> None:
    (tmp_path / "e.md").write_text("{{#each todos}}{{status}}{{/each}}")
    with pytest.raises(TemplateError, match="missing variable 'status'"):
        TemplateEngine(builtin=tmp_path).render("e.md", {"todos": [{"content": "x"}]})


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("before {{foo after", "never closed"),
        ("before {{#if x}}in", "'{{#if}}' is never closed"),
        ("{{#each xs}}{{/if}}", "closes '{{#each}}'"),
        ("{{/each}}", "closes no open block"),
        ("{{else}}", "outside a block"),
    ],
)
def test_lint_rejects_what_pybars_would_silently_drop(source: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")):
        lint(source)


def test_every_shipped_template_lints() -> None:
    for path in builtin_dir().glob("*.md"):
        lint(path.read_text())


def test_every_shipped_template_passes_the_safe_grammar() -> None:
    names = {p.name for p in builtin_dir().glob("*.md")}
    assert len(names) >= 7
    for name in names:
        check((builtin_dir() / name).read_text(), names)
    engine = TemplateEngine()
    assert engine.errors == [] and all(engine.origin(name) == "built-in" for name in names)


@pytest.mark.parametrize(
    "source",
    [
        "{{a}} {{a.b}} {{a.b-c.0}} {{this}} {{this.x}} {{../a}} {{../../a.b}} {{@root.x}}",
        "{{#each xs}}{{@index}}{{@first}}{{@last}}{{@key}}{{inc @index}}{{/each}}",
        "{{{a}}} {{& a}} {{~a~}} {{{~a~}}} {{~#if a~}}x{{~else~}}y{{~/if~}}",
        '{{#if (contains tags "b")}}x{{^}}y{{/if}} {{#unless a}}{{/unless}} {{#with a}}{{b}}{{/with}}',
        "{{json a}} {{contains a 'x'}} {{inc -1}} {{contains a true}} {{! a note }} {{!-- a note --}}",
        '{{> p.md }} {{>p.md}} plain } text { and {"json": {{a}}}',
    ],
)
def test_safe_grammar_accepts(source: str) -> None:
    check(source, {"p.md"})


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("ok\n{{[a]}}", "line 2: '[...]' path segments"),
        ("{{a b=1}}", "hash arguments"),
        ("{{inc a b}}", "takes 1 argument"),
        ("{{json}}", "takes 1 argument"),
        ("{{nope a}}", "unknown helper 'nope'"),
        ("{{#each xs as |x|}}{{/each}}", "block parameters"),
        ("{{#lookup a}}{{/lookup}}", "unknown block helper"),
        ("{{#if (inc (inc a))}}{{/if}}", "nested subexpressions"),
        ("{{#if (lookup a b)}}{{/if}}", "unknown helper 'lookup'"),
        ("{{#each (json a)}}{{/each}}", "takes a path"),
        ("{{#if a b}}{{/if}}", "takes one argument"),
        ("{{> nope.md }}", "unknown partial"),
        ("{{> p.md a}}", "a partial is named by a template file name only"),
        ('{{inc "a\\b"}}', "a string may not hold"),
        ('{{inc "a\'b"}}', "a string may not hold"),
        ("{{a.__class__}}", "unexpected"),
        ("{{_a}}", "unexpected"),
        ("{{a\u200b}}", "character U+200B"),
        ("{{é}}", "character U+00E9"),
        ("{{{{raw}}}}x{{{{/raw}}}}", "raw blocks"),
        ("{{^a}}x{{/a}}", "inverted sections"),
        ("{{#if a}}{{else if b}}{{/if}}", "is not supported"),
        ("{{#if a}}{{else}}{{else}}{{/if}}", "a second"),
        ("{{#if a}}{{/if }}", "closes no block helper"),
        ("{{!-- a }} b --}}", "comment"),
        ("a }} b", "'}}' without an opening"),
        ("{{{a}}", "closed with '}}' instead"),
        ("{{if}}", "is a helper name"),
        ("{{log}}", "is a helper name"),
        ("{{inc nullable}}", "literal"),
        ('{{contains a"b"}}', "separated by spaces"),
        ("{{a/b}}", "unexpected"),
        ("{{a}}\n" * 400 + "{{b}}", "line 401: more than 400 tags"),
    ],
)
def test_safe_grammar_refuses(source: str, message: str) -> None:
    with pytest.raises(TemplateError, match=re.escape(message)):
        check(source, {"p.md"})


def test_unescape_keeps_whitespace_control() -> None:
    assert unescape_all("a {{~x~}} b") == "a {{~&x~}} b"


def test_unescape_all_leaves_blocks_and_partials() -> None:
    src = "{{a}} {{{b}}} {{#if c}}{{else}}{{/if}} {{> p.md }} {{!note}}"
    assert unescape_all(src) == "{{{a}}} {{{b}}} {{#if c}}{{else}}{{/if}} {{> p.md }} {{!note}}"


def test_workspace_override_is_used(workspace: Path) -> None:
    folder = workspace / ".forge" / "templates"
    folder.mkdir(parents=True)
    (folder / RETRY_MESSAGE).write_text("Failed. {{attempts_left}} of {{allowed_max_attempts}} left.")
    engine = TemplateEngine(workspace)
    assert engine.render(RETRY_MESSAGE, {"attempts_left": 1, "allowed_max_attempts": 3}) == "Failed. 1 of 3 left."
    assert engine.origin(RETRY_MESSAGE) == ".forge/templates/forge-tool-retry-message.md"
    assert engine.errors == []


def test_malformed_override_is_reported_and_builtin_stays(workspace: Path) -> None:
    folder = workspace / ".forge" / "templates"
    folder.mkdir(parents=True)
    (folder / RETRY_MESSAGE).write_text("Failed {{attempts_left")
    engine = TemplateEngine(workspace)
    assert len(engine.errors) == 1
    assert "forge-tool-retry-message.md" in engine.errors[0] and "never closed" in engine.errors[0]
    assert engine.origin(RETRY_MESSAGE) == "built-in"
    assert "Attempts remaining:** 3" in engine.render(RETRY_MESSAGE, {"attempts_left": 3, "allowed_max_attempts": 3})


def test_override_symlink_outside_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "evil.md"
    outside.write_text("pwned {{attempts_left}}")
    folder = workspace / ".forge" / "templates"
    folder.mkdir(parents=True)
    (folder / RETRY_MESSAGE).symlink_to(outside)
    engine = TemplateEngine(workspace)
    assert "outside the workspace" in engine.errors[0]
    assert engine.origin(RETRY_MESSAGE) == "built-in"


def test_unknown_template() -> None:
    with pytest.raises(TemplateError, match="unknown template"):
        TemplateEngine().render("nope.md", {})


def test_override_with_a_missing_variable_falls_back_to_builtin(workspace: Path) -> None:
    folder = workspace / ".forge" / "templates"
    folder.mkdir(parents=True)
    (folder / RETRY_MESSAGE).write_text("{{attempts_left}} left, {{no_such_thing}}")
    engine = TemplateEngine(workspace)
    out = engine.render(RETRY_MESSAGE, {"attempts_left": 1, "allowed_max_attempts": 3})
    assert out.startswith("Tool call failed\n- **Attempts remaining:** 1")
    assert len(engine.errors) == 1 and "missing variable 'no_such_thing'" in engine.errors[0]
    assert engine.origin(RETRY_MESSAGE) == "built-in"


def test_concurrent_first_renders_on_a_fresh_engine_never_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 10: templates compiled in a background thread while the turn compiled them too; pybars3's
    # compiler keeps its code builder on the class, so concurrent compiles corrupted each other.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing compiled yet
    folder = tmp_path / "builtin"
    folder.mkdir()
    nonce = os.urandom(6).hex()
    for i in range(6):
        (folder / f"t{i}.md").write_text(
            f"{nonce} {i}: {{{{#each xs}}}}{{{{inc @index}}}}={{{{this}}}}{{{{#unless @last}}}}, {{{{/unless}}}}{{{{/each}}}}"
            f" and {{{{#if flag}}}}{{{{json obj}}}}{{{{else}}}}none{{{{/if}}}} {i}"
        )
    ctx = {"xs": ["a", "b"], "flag": True, "obj": {"k": 1}}
    engines = [TemplateEngine(builtin=folder) for _ in range(2)]
    barrier = threading.Barrier(12)
    failures: list[BaseException] = []
    outs: dict[str, set[str]] = {}

    def work(n: int) -> None:
        engine = engines[n % 2]
        barrier.wait()
        for i in [*range(n % 6, 6), *range(n % 6)]:
            try:
                outs.setdefault(f"t{i}.md", set()).add(engine.render(f"t{i}.md", ctx))
            except BaseException as exc:  # noqa: BLE001 - every failure is the finding
                failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert {name: len(v) for name, v in outs.items()} == {f"t{i}.md": 1 for i in range(6)}
    assert outs["t2.md"] == {f'{nonce} 2: 1=a, 2=b and {{"k": 1}} 2'}


def test_whitespace_control_renders(tmp_path: Path) -> None:
    (tmp_path / "w.md").write_text("a  {{~x~}}  b {{#if y~}}\n  in\n{{~/if}}")
    assert TemplateEngine(builtin=tmp_path).render("w.md", {"x": "<x>", "y": True}) == "a<x>b in"
