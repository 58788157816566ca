"""Loops the failure tracker cannot see (issue 37 section 3): the same call (same tool, same normalized
arguments) repeated, whatever the formatting of its arguments."""

from __future__ import annotations

from pathlib import Path

from forge_lsp.domain import doom_loop
from forge_lsp.domain.events import TurnStatus
from forge_lsp.domain.messages import ToolCall

from fakes import FakeModel, Harness, answer, tools

# The same shell call as a model may format it: spacing, newlines and key order differ, the call does not.
FORMATS = (
    '{"command": "echo run >> log.txt", "description": "log a run"}',
    '{ "command" : "echo run >> log.txt" , "description" : "log a run" }',
    '{"description":"log a run","command":"echo run >> log.txt"}',
    '{\n  "description": "log a run",\n  "command": "echo run >> log.txt"\n}',
    '{"command":"echo run >> log.txt",\t"description":"log a run"}',
    '{ "description": "log a run", "command": "echo run >> log.txt" }',
    '{"command":   "echo run >> log.txt", "description": "log a run"}',
)


def raw(name: str, arguments: str, i: int) -> ToolCall:
    return ToolCall(f"call-{i}", name, arguments)


async def test_the_reminder_sees_reformatted_repeats_as_the_same_call(workspace: Path) -> None:
    model = FakeModel([tools(raw("shell", text, i)) for i, text in enumerate(FORMATS[:3])] + [answer("stopping")])
    h = Harness(workspace, model)
    summary = await h.run()
    assert summary.status is TurnStatus.COMPLETED
    (reminder,) = h.of("reminder")
    assert reminder.kind == "doomLoop" and "same tool call 3 times" in reminder.text
    assert "<system_reminder>" in str(model.requests[3][-1]["content"])


def test_signatures_compare_parsed_arguments() -> None:
    a = ToolCall("1", "write", '{"file_path": "a.py", "content": "x = 1\\n"}')
    b = ToolCall("2", "write", '{ "content" : "x = 1\\n",\n "file_path" : "a.py" }')
    c = ToolCall("3", "write", '{"file_path": "a.py", "content": "x = 2\\n"}')
    assert doom_loop.signature(a) == doom_loop.signature(b) != doom_loop.signature(c)
    assert doom_loop.signature(a) != doom_loop.signature(ToolCall("4", "patch", a.arguments_json))
    # Not JSON: compared as the text it is (one character apart is another call).
    assert doom_loop.signature(ToolCall("5", "shell", '{"command": ')) == doom_loop.signature(
        ToolCall("6", "shell", '{"command": ')
    )
    assert doom_loop.signature(ToolCall("5", "shell", '{"command": ')) != doom_loop.signature(
        ToolCall("6", "shell", '{"command":')
    )
    # No arguments and an empty object are the same call.
    assert doom_loop.signature(ToolCall("7", "todo_read", "")) == doom_loop.signature(ToolCall("8", "todo_read", "{ }"))
    # A write of megabytes is kept as a digest, and still compared by its parsed arguments.
    big = '{"file_path": "a", "content": "%s"}' % ("x" * 100_000)
    big2 = '{ "content": "%s", "file_path": "a" }' % ("x" * 100_000)
    sig = doom_loop.signature(ToolCall("9", "write", big))
    assert sig == doom_loop.signature(ToolCall("10", "write", big2)) and len(sig[1]) < 100
