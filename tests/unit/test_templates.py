"""TemplateEngine: byte-exact retry notice, strict, unescaped, helpers, partials, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_lsp.templates import RETRY_MESSAGE, TemplateEngine, TemplateError, builtin_dir, lint, unescape_all

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
    out = engine.render("forge-system-prompt.md", {"env": env, "tool_names": ["read", "shell"], "custom_instructions": None})
    assert "<current_working_directory>/w</current_working_directory>" in out
    assert "Available tools: read, shell." in out


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
