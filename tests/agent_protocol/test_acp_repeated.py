"""The repeated-call stop over ACP (issue 37 section 3): end_turn with the reason said and in _meta, the call not
run ends failed with why, and the next prompt (the client's way to continue) goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from acp import text_block
from test_acp import Recorder, start, workspace_with

pytestmark = pytest.mark.timeout(90)

FORMATS = (
    '{"command": "echo run >> log.txt"}',
    '{ "command" : "echo run >> log.txt" }',
    '{\n  "command": "echo run >> log.txt"\n}',
    '{"command":"echo run >> log.txt"}',
    '{"command":   "echo run >> log.txt" }',
    '{ "command": "echo run >> log.txt"}',
)


async def test_repeats_end_the_turn_with_the_reason_and_the_next_prompt_goes_on(
    workspace: Path, record_reliability: Callable[[str, str, str], None]
) -> None:
    repeats = [{"tool_calls": [{"name": "shell", "arguments": text}]} for text in FORMATS]
    workspace_with(workspace, *repeats, {"text": "Stopped repeating."})
    client = Recorder()
    ctx, conn, proc, init = await start(client)
    try:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("log a run")])
        again = await conn.prompt(session_id=session.session_id, prompt=[text_block("Continue.")])
    finally:
        await ctx.__aexit__(None, None, None)
    assert result.stop_reason == "end_turn"
    meta = result.field_meta
    assert (meta["kind"], meta["limit"], meta["tool"]) == ("MaxRepeatedCallsReached", 6, "shell")
    assert meta["forge"]["status"] == "interrupted"
    assert (
        "Interrupted: Repeated call limit (6) reached for this turn: shell was called 6 times in a row with the same "
        "arguments; the last shell call was not run. Send a new prompt to continue." in client.text()
    )
    assert len((workspace / "log.txt").read_text().splitlines()) == 5
    # Six tool calls shown; the last ends failed, saying it was not run.
    calls = client.of("tool_call")
    assert len(calls) == 6
    finals = {u.tool_call_id: u for u in client.of("tool_call_update") if u.status in ("completed", "failed")}
    assert [finals[c.tool_call_id].status for c in calls] == ["completed"] * 5 + ["failed"]
    last = finals[calls[-1].tool_call_id].content[0].content.text
    assert last.startswith("<tool_call_error><cause>not run: the same shell call was made 6 times in a row")
    assert again.stop_reason == "end_turn" and again.field_meta["forge"]["status"] == "completed"
    assert "Stopped repeating." in client.text()
    record_reliability(
        "a model repeating one call with reformatted arguments, over ACP",
        "6 shell calls differing only in JSON spacing; then the next prompt",
        "end_turn with MaxRepeatedCallsReached in _meta and the reason said; 5 ran, the 6th failed as not run; "
        "the next prompt completed",
    )
