"""The model port over litellm: streamed completions, errors classified for retry.

litellm takes seconds to import, so it is imported on first use (or warmed in
a background thread), never at server start.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.messages import AssistantReply, ToolCall, Usage
from forge_lsp.domain.retry import ModelError
from forge_lsp.llm import scripted

log = logging.getLogger(__name__)
_lock = threading.Lock()
_loaded: Any = None


def load_litellm() -> Any:
    """Import and set up litellm once: no cost-map download, the scripted provider registered."""
    global _loaded
    with _lock:
        if _loaded is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            # litellm copies the whole history for its own success logging on every request; we register
            # no litellm callbacks (usage comes from the stream), so that work is pure per-request cost.
            os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            litellm.disable_streaming_logging = True
            providers = [p for p in (litellm.custom_provider_map or []) if p.get("provider") != scripted.PROVIDER]
            litellm.custom_provider_map = [*providers, {"provider": scripted.PROVIDER, "custom_handler": scripted.make_handler()}]
            from litellm.utils import custom_llm_setup

            custom_llm_setup()
            # litellm leaves ~1M long-lived objects; freezing them keeps every later full GC
            # from walking them again (those pauses otherwise land anywhere in the turn loop).
            gc.collect()
            gc.freeze()
            _loaded = litellm
        return _loaded


def warm_up() -> threading.Thread:
    """Start importing litellm in a background thread, so the first turn does not wait."""
    thread = threading.Thread(target=load_litellm, name="litellm-import", daemon=True)
    thread.start()
    return thread


def resolve_model(model: str, root: Path) -> str:
    """scripted/<relative path> -> scripted/<absolute path>; other models as they are."""
    prefix = scripted.PROVIDER + "/"
    if model.startswith(prefix):
        name = model[len(prefix) :]
        if name not in scripted.BUILTIN and not Path(name).is_absolute():
            return prefix + str((root / name).resolve())
    return model


def _retry_after(exc: BaseException) -> float | None:
    value = getattr(exc, "retry_after", None)
    if value is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def classify(exc: BaseException, status_codes: Sequence[int]) -> ModelError:
    """A litellm/openai/transport exception as a ModelError, retryable or not."""
    inner = getattr(exc, "original_exception", None) or exc
    status = getattr(inner, "status_code", None) or getattr(exc, "status_code", None)
    name = type(inner).__name__
    message = str(getattr(inner, "message", None) or inner).strip() or name
    transport = name in {"Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError", "InternalServerError"}
    transport = transport or isinstance(inner, ConnectionError | TimeoutError)
    if isinstance(status, int) and status in (400, 401, 403, 404):
        retryable = False
    else:
        retryable = transport or (isinstance(status, int) and status in status_codes)
    return ModelError(message, retryable, status if isinstance(status, int) else None, _retry_after(inner) or _retry_after(exc))


class LiteLLMModel:
    """The model port: one streamed chat completion per call, through litellm."""

    def __init__(self, config: ForgeConfig, root: Path, model: str | None = None) -> None:
        self.config = config
        chosen = model or config.model
        if not chosen:  # no silent default; the runtime says where to set one before it gets here
            raise ValueError("no model is set")
        self.model = resolve_model(chosen, root)

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: Callable[[str], None]
    ) -> AssistantReply:
        """Send one request; stream text through on_text; ModelError on failure."""
        # The first import takes seconds: do it off the event loop, which keeps serving meanwhile.
        litellm = _loaded or await asyncio.to_thread(load_litellm)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True, "num_retries": 0}
        if tools:
            kwargs["tools"] = tools
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            kwargs["max_tokens"] = self.config.max_tokens
        kwargs["timeout"] = float(self.config.request_timeout_secs)
        # Retries are ours (each one an llmRetry event); the OpenAI SDK must not retry behind our back.
        kwargs["max_retries"] = 0
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage = Usage()
        try:
            stream = await litellm.acompletion(**kwargs)
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    u = chunk.usage
                    usage = Usage(int(u.prompt_tokens or 0), int(u.completion_tokens or 0))
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    on_text(delta.content)
                for tc in delta.tool_calls or ():
                    slot = calls.setdefault(tc.index or 0, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = tc.id or slot["id"]
                    if tc.function is not None:
                        if tc.function.name and not slot["name"]:
                            slot["name"] = tc.function.name
                        slot["arguments"] += tc.function.arguments or ""
            # litellm schedules its own success logging (cost, payload) as a task when the stream
            # ends: let it run now, inside the model call whose cost it is.
            await asyncio.sleep(0)
        except ModelError:
            raise
        except Exception as exc:  # litellm raises many types; all become ModelError
            raise classify(exc, self.config.retry.status_codes) from exc
        tool_calls = tuple(
            ToolCall(id=c["id"] or f"call_{uuid.uuid4().hex[:16]}", name=c["name"], arguments_json=c["arguments"])
            for _, c in sorted(calls.items())
        )
        reply = "".join(text)
        if not reply.strip() and not tool_calls:
            raise ModelError("the model sent an empty reply", retryable=True)
        return AssistantReply(reply, tool_calls, finish, usage)
