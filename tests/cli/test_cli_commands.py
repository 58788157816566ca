"""forge-lsp run /name args: a command from the command line, as a user types it."""

from __future__ import annotations

import os
from pathlib import Path

from test_cli import forge, write_script


def transcript_prompt(workspace: Path) -> str:
    (path,) = (workspace / ".forge" / "transcripts").glob("*.md")
    return path.read_text().split("## Prompt\n\n", 1)[1]


def test_run_a_user_command_with_its_args(workspace: Path) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "forge-lsp" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("---\ndescription: Fix an issue\n---\nFix issue {{args}} and run the tests.\n")
    write_script(workspace, {"text": "Fixed."})
    p = forge("run", "/fix", "#12", "in", "parser.py", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    assert "Fixed." in p.stdout
    assert transcript_prompt(workspace).startswith("Fix issue #12 in parser.py and run the tests.\n")


def test_run_a_builtin_command(workspace: Path) -> None:
    write_script(workspace, {"text": "Looks fine."})
    p = forge("run", "/review security", "--workspace", str(workspace))
    assert p.returncode == 0, p.stderr
    prompt = transcript_prompt(workspace)
    assert prompt.startswith("Review the changes in this working tree.") and "Focus on: security" in prompt


def test_an_unknown_command_is_one_line_listing_them(workspace: Path) -> None:
    write_script(workspace, {"text": "never"})
    p = forge("run", "/nope", "--workspace", str(workspace))
    assert p.returncode == 1  # bad input (docs/cli.md)
    assert p.stderr.strip().splitlines() == [
        "forge-lsp: unknown command /nope; the commands are /explain, /review, /test (to send a prompt that starts "
        "with /nope, write //nope)"
    ]
    assert not (workspace / ".forge" / "transcripts").exists()


def test_words_after_a_prompt_that_is_not_a_command_ask_for_quotes(workspace: Path) -> None:
    p = forge("run", "fix", "the", "test", "--workspace", str(workspace))
    assert p.returncode == 1  # bad input (docs/cli.md)
    assert 'put the prompt in quotes: forge-lsp run "fix the test"' in p.stderr
