"""Commands (/name args): loading with front matter, errors at their line, precedence, rendering, the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_lsp.core.commands import BUILTINS, Commands, UnknownCommand, split_invocation
from forge_lsp.core.errors import BadPrompt
from forge_lsp.templates import TemplateEngine


@pytest.fixture(scope="module")
def engine() -> TemplateEngine:
    return TemplateEngine()


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def load(tmp_path: Path, trusted: bool = True) -> Commands:
    return Commands.load(tmp_path / "ws", trusted=trusted, user=tmp_path / "user")


def test_builtins_are_review_test_explain(tmp_path: Path) -> None:
    commands = load(tmp_path)
    assert [c.name for c in commands.list()] == ["explain", "review", "test"]
    assert all(c.source == "builtin" and c.description for c in commands.list())
    assert commands.problems == []


def test_args_render_through_the_template(tmp_path: Path, engine: TemplateEngine) -> None:
    write(tmp_path / "user", "fix.md", "---\nname: fix\ndescription: Fix an issue\n---\nFix issue {{args}} now.\n")
    out = load(tmp_path).expand("/fix  #12 <b> & 'x' {{y}}  ", engine)
    # unescaped, the args are data (never parsed as a template), trimmed
    assert out.prompt == "Fix issue #12 <b> & 'x' {{y}} now."
    assert out.command is not None and out.command.source == "user"


def test_builtin_args_are_optional(tmp_path: Path, engine: TemplateEngine) -> None:
    commands = load(tmp_path)
    assert "Focus on: auth" in commands.expand("/review auth", engine).prompt
    assert "Focus on" not in commands.expand("/review", engine).prompt
    assert commands.expand("/explain src/x.py", engine).prompt.startswith("Explain src/x.py:")


def test_precedence_workspace_over_user_over_builtin(tmp_path: Path, engine: TemplateEngine) -> None:
    write(tmp_path / "user", "review.md", "---\ndescription: user review\n---\nuser review {{args}}\n")
    write(tmp_path / "user", "mine.md", "---\ndescription: user mine\n---\nuser mine\n")
    write(tmp_path / "ws" / ".forge" / "commands", "m.md", "---\nname: mine\ndescription: ws mine\n---\nws mine\n")
    commands = load(tmp_path)
    by = {c.name: c for c in commands.list()}
    assert (by["review"].source, by["mine"].source, by["test"].source) == ("user", "workspace", "builtin")
    assert commands.expand("/mine", engine).prompt == "ws mine"
    assert commands.expand("/review x", engine).prompt == "user review x"


def test_untrusted_workspace_commands_are_not_loaded(tmp_path: Path, engine: TemplateEngine) -> None:
    write(tmp_path / "ws" / ".forge" / "commands", "evil.md", "---\ndescription: evil\n---\nrm -rf\n")
    untrusted = load(tmp_path, trusted=False)
    assert "evil" not in untrusted.by_name
    assert "evil" in load(tmp_path, trusted=True).by_name
    # running it says why it is not there
    with pytest.raises(UnknownCommand, match=r"^/evil is this workspace's command \(\.forge/commands/evil\.md\), ignored"):
        untrusted.expand("/evil now", engine)


def test_name_defaults_to_the_file_name_and_agent_model_are_kept(tmp_path: Path) -> None:
    write(tmp_path / "user", "plan-it.md", "---\ndescription: Plan\nagent: muse\nmodel: openai/gpt-4o\n---\nPlan {{args}}\n")
    command = load(tmp_path).by_name["plan-it"]
    assert (command.agent, command.model, command.description) == ("muse", "openai/gpt-4o", "Plan")
    assert command.to_dict() == {
        "name": "plan-it",
        "description": "Plan",
        "source": "user",
        "takesArgs": True,
        "agent": "muse",
        "model": "openai/gpt-4o",
        "path": str(tmp_path / "user" / "plan-it.md"),
    }


def test_front_matter_errors_are_at_their_line_and_others_still_load(tmp_path: Path) -> None:
    user = tmp_path / "user"
    bad_yaml = write(user, "a.md", "---\nname: a\ndescription: [unclosed\nagent: x\n---\nbody\n")
    unknown = write(user, "b.md", "---\nname: b\n\ncolour: red\n---\nbody {{args}}\n")
    bad_tag = write(user, "c.md", "---\nname: c\n---\nline 4\nline 5 {{x.__class__}}\n")
    unclosed = write(user, "d.md", "---\nname: d\nbody without an end\n")
    bad_name = write(user, "e.md", "---\nname: 'no spaces'\n---\nbody\n")
    write(user, "ok.md", "---\ndescription: fine\n---\nfine\n")
    commands = load(tmp_path)
    where = {(p.path, p.line) for p in commands.problems}
    assert (bad_yaml, 4) in where or (bad_yaml, 3) in where
    assert (unknown, 4) in where and any(p.key == "colour" for p in commands.problems)
    assert (bad_tag, 5) in where
    assert (unclosed, 1) in where
    assert (bad_name, 2) in where
    # a bad field is dropped alone; a bad file is not loaded; the rest load
    assert {"b", "ok"} <= set(commands.by_name) and not {"a", "c", "d", "e"} & set(commands.by_name)


def test_missing_variable_is_a_clear_error(tmp_path: Path, engine: TemplateEngine) -> None:
    path = write(tmp_path / "user", "x.md", "---\ndescription: x\n---\nUse {{args}} and {{target}}\n")
    with pytest.raises(BadPrompt, match=r"^command /x \(" + str(path) + r"\): missing variable 'target'$"):
        load(tmp_path).expand("/x a", engine)


def test_unknown_command_lists_the_commands(tmp_path: Path, engine: TemplateEngine) -> None:
    with pytest.raises(UnknownCommand, match=r"unknown command /nope; the commands are /explain, /review, /test"):
        load(tmp_path).expand("/nope please", engine)


@pytest.mark.parametrize(
    "prompt",
    ["/usr/bin is on PATH?", "/etc/hosts: what is it", "fix /review", " /review", "/.hidden", "/", "/review/x"],
)
def test_a_prompt_that_only_starts_with_a_path_is_a_prompt(tmp_path: Path, engine: TemplateEngine, prompt: str) -> None:
    assert split_invocation(prompt) is None
    assert load(tmp_path).expand(prompt, engine).prompt == prompt


def test_double_slash_sends_the_text(tmp_path: Path, engine: TemplateEngine) -> None:
    out = load(tmp_path).expand("//review is a path here", engine)
    assert (out.prompt, out.command) == ("/review is a path here", None)


def test_invocation_split() -> None:
    assert split_invocation("/review") == ("review", "")
    assert split_invocation("/review\n  a b\n") == ("review", "a b")
    assert split_invocation("/my_cmd-2 x") == ("my_cmd-2", "x")


def test_workspace_link_outside_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path, "outside.md", "---\ndescription: o\n---\nsecret\n")
    folder = tmp_path / "ws" / ".forge" / "commands"
    folder.mkdir(parents=True)
    (folder / "o.md").symlink_to(outside)
    commands = load(tmp_path)
    assert "o" not in commands.by_name
    assert any("outside the workspace" in p.message for p in commands.problems)


def test_builtins_check_against_the_grammar(engine: TemplateEngine) -> None:
    for command in BUILTINS:
        assert engine.render_text(command.name, command.body, "built-in", {"args": "a"}).strip()


def test_a_command_naming_an_agent_that_does_not_exist_is_not_loaded(tmp_path: Path) -> None:
    path = write(tmp_path / "user", "plan.md", "---\ndescription: Plan\nagent: mues\n---\nPlan {{args}}\n")
    write(tmp_path / "user", "ask.md", "---\ndescription: Ask\nagent: sage\n---\nAsk {{args}}\n")
    commands = Commands.load(tmp_path / "ws", trusted=True, user=tmp_path / "user", agents=["forge", "muse", "sage"])
    assert "plan" not in commands.by_name and commands.by_name["ask"].agent == "sage"
    (problem,) = commands.problems
    assert (problem.path, problem.line, problem.key) == (path, 3, "agent")
    assert "no agent 'mues' (the agents are forge, muse, sage)" in problem.message


def test_nothing_of_an_untrusted_workspaces_command_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import forge_lsp.core.commands as commands_module

    write(tmp_path / "ws" / ".forge" / "commands", "slow.md", "---\nname: other\n---\nx\n")

    def refuse(*args: object) -> str:
        raise AssertionError("an untrusted workspace's command file was read")

    monkeypatch.setattr(commands_module, "read_definition", refuse)
    untrusted = load(tmp_path, trusted=False)
    assert untrusted.untrusted == {"slow": tmp_path / "ws" / ".forge" / "commands" / "slow.md"} and untrusted.problems == []


def test_takes_args_is_whether_the_prompt_uses_them(tmp_path: Path) -> None:
    write(tmp_path / "user", "a.md", "---\ndescription: a\n---\nFix {{args}}\n")
    write(tmp_path / "user", "b.md", "---\ndescription: b\n---\nFix the args of main\n")
    write(tmp_path / "user", "c.md", "---\ndescription: c\n---\n{{#if args}}x{{/if}}\n")
    by = load(tmp_path).by_name
    assert (by["a"].takes_args, by["b"].takes_args, by["c"].takes_args) == (True, False, True)
    assert all(c.takes_args for c in BUILTINS)
