"""Prompt caching: where a provider caches a prompt's prefix only at the breakpoints a request marks
(Anthropic's cache_control, and the providers that serve Claude), each request marks two: the end of the
stable prefix (the system prompt, after the tool definitions, which the provider puts before it) and the end
of the conversation so far, so a turn's next request reads all of it from the cache and pays for the new
messages only. litellm places the marks (its cache_control_injection_points) in each provider's dialect.

Providers that cache a prefix by themselves (OpenAI, DeepSeek, Gemini, llama-server's slot) need no mark:
for them what matters is that the prefix stays the same, which the request's order sees to (the system
prompt's fixed part and the tools first, the workspace's details after: core/turn.py).
"""

from __future__ import annotations

from typing import Any

BREAKPOINT_PROVIDERS = frozenset({"anthropic", "bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta"})
"""litellm providers whose Claude models cache only at marked breakpoints."""

INJECTION_POINTS: tuple[dict[str, Any], ...] = (
    {"location": "message", "role": "system"},
    {"location": "message", "index": -1},
)
"""The system prompt (with the tools before it, the stable prefix) and the last message (the history so far)."""

_marks: dict[str, bool] = {}


def marks_breakpoints(litellm: Any, model: str) -> bool:
    """Whether requests to this model carry cache breakpoints: litellm says it supports prompt caching and its
    provider caches only where a request marks it (cached per model)."""
    if model not in _marks:
        try:
            _, provider, _, _ = litellm.get_llm_provider(model)
            from litellm.utils import supports_prompt_caching

            _marks[model] = provider in BREAKPOINT_PROVIDERS and bool(supports_prompt_caching(model))
        except Exception:  # a model litellm does not know: nothing to mark
            _marks[model] = False
    return _marks[model]


def cache_kwargs(litellm: Any, model: str) -> dict[str, Any]:
    """litellm's arguments that mark the cache breakpoints of a request to this model (none when it has none)."""
    if not marks_breakpoints(litellm, model):
        return {}
    return {"cache_control_injection_points": [dict(p) for p in INJECTION_POINTS]}
