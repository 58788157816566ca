"""litellm in the server without tiktoken's tables: ~41 MB resident and a tokenization of the whole
history per request, for a hidden cost figure forge-lsp does not use (issue 24, performance row 28)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(120)

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from support.openai_server import OpenAIStub
    from forge_lsp.domain.config import ForgeConfig
    from forge_lsp.llm import litellm_adapter as la
    from pathlib import Path

    la.warm_up().join()  # a request to the scripted model, as the server's warm-up makes
    with OpenAIStub([{"text": "ok", "usage": {"prompt_tokens": 900, "completion_tokens": 2}}]) as stub:  # and one to an OpenAI-compatible server, as a turn makes
        config = ForgeConfig(model="openai/gpt-4o", api_base=stub.url)
        reply = asyncio.run(la.LiteLLMModel(config, Path("."), "openai/gpt-4o").complete(
            [{"role": "user", "content": "hi " * 1000}], [], lambda text: None))
    import tiktoken.registry
    print(json.dumps({
        "encodings": sorted(tiktoken.registry.ENCODINGS),
        "default_encoding": "litellm.litellm_core_utils.default_encoding" in sys.modules,
        "tokens": [reply.usage.prompt_tokens, reply.usage.completion_tokens],
        "cost": reply.usage.cost,
    }))
    """
)


def test_a_request_through_litellm_loads_no_tokenizer_tables() -> None:
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]),
        "OPENAI_API_KEY": "sk-test",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "FORGE_LSP_SCRIPTED": "litellm",
    }
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["encodings"] == [] and found["default_encoding"] is False
    # The usage and cost still come from the stream and the cost map.
    assert found["tokens"][0] > 0 and found["cost"] is not None and found["cost"] > 0
