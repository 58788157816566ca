"""Secrets stay out of transcripts, logs and notifications; config cannot smuggle keys or templates."""

from __future__ import annotations

import json
from pathlib import Path

from forge_lsp.config import ConfigLoader

from support import forkserver
from support.rawlsp import RawClient

SECRET = "sk-live-DO-NOT-LEAK-4242424242"


def test_environment_secrets_never_reach_transcripts_or_logs(workspace: Path, record_reliability) -> None:  # type: ignore[no-untyped-def]
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "shell", "arguments": {"command": "echo key=$OPENAI_API_KEY; echo tok=$GITHUB_TOKEN; exit 1"}}
                ]
            },
            {"text": "done"},
        ]
    }
    (workspace / "script.json").write_text(json.dumps(script))
    (workspace / ".forge.toml").write_text('model = "scripted/script.json"\n')
    client = RawClient([*forkserver.command()], settings={}, env={"OPENAI_API_KEY": SECRET, "GITHUB_TOKEN": SECRET[::-1]})
    client.initialize(workspace)
    client.notify("initialized", {})
    result = client.request("workspace/executeCommand", {"command": "forge.run", "arguments": [{"prompt": "leak it"}]})
    client.close()
    transcript = (workspace / ".forge" / "transcripts" / f"{result['turnId']}.md").read_text()
    everything = transcript + "\n".join(client.logs) + json.dumps(client.events)
    assert "key=[REDACTED]" in transcript and "tok=[REDACTED]" in transcript
    assert SECRET not in everything and SECRET[::-1] not in everything
    record_reliability(
        "secrets in the environment (*_API_KEY, *_TOKEN) echoed by a tool",
        "shell output with 2 secrets",
        "[REDACTED] in transcript, logMessage and forge/event",
    )


def test_config_cannot_carry_keys_or_point_templates_outside(workspace: Path) -> None:
    (workspace / ".forge.toml").write_text('api_key = "sk-x"\ntemplates = "/etc"\n[tools.fetch]\napi_key = "y"\n')
    eff = ConfigLoader(workspace, workspace / "none.toml").load()
    keys = {p.key: p.message for p in eff.problems}
    assert "environment" in keys["api_key"] and "environment" in keys["tools.fetch.api_key"]
    assert keys["templates"] == "unknown key"
    assert "sk-x" not in json.dumps(eff.show())
