"""The model port over litellm: streamed completions, errors classified for retry.

litellm takes seconds to import, so it is imported in a background thread as soon as
the server is `initialized` (FORGE_LSP_WARMUP_DELAY seconds later, default 0; "off":
on first use), so that a first turn sent right away finds it (nearly) loaded; never
before `initialize` is answered.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.messages import AssistantReply, Notice, Usage
from forge_lsp.domain.retry import ModelError
from forge_lsp.domain.tokens import CHARS_PER_TOKEN, estimate_tokens
from forge_lsp.llm import caching, errors, local_servers, scripted, streaming
from forge_lsp.llm.streaming import read_usage

__all__ = ["LiteLLMModel", "classify", "context_window", "cost_of", "load_litellm", "read_usage", "warm_up"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_loaded: Any = None
_warming: threading.Thread | None = None
_warming_lock = threading.Lock()  # not _lock: a turn's import holds that one for seconds
_requested = False  # a model request went through litellm: the warm-up has nothing left to do

WARM_UP_DELAY_ENV = "FORGE_LSP_WARMUP_DELAY"
"""Seconds the server waits after `initialized` before it loads litellm in the background (default 0);
"off" never does (a turn then loads it itself). The older FORGE_LSP_PRELOAD=1 means 0, =0 means off."""
DEFAULT_WARM_UP_DELAY_S = 0.0


def load_litellm() -> Any:
    """Import and set up litellm once: no cost-map download, the scripted provider registered."""
    global _loaded
    with _lock:
        if _loaded is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            # litellm in its default DEV mode loads a .env from its install folder and every folder above
            # it: a cloned repository's .env (with a venv inside the clone) would set OPENAI_BASE_URL or
            # BASH_ENV for every request and command. Keys come from the real environment only.
            os.environ["LITELLM_MODE"] = "PRODUCTION"
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            # litellm copies the whole history for its own success logging on every request; we register
            # no litellm callbacks (usage comes from the stream), so that work is pure per-request cost.
            os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
            # The import creates ~400k objects; each full collection during it walks them all while holding
            # the GIL (0.3-0.7 s in which the event loop cannot answer forge.status). None run during the
            # import; afterwards the objects are frozen out of every later collection (the import leaves
            # ~2000 unreachable objects: not worth a collection of its own).
            collecting = gc.isenabled()
            gc.disable()
            try:
                import litellm

                litellm.suppress_debug_info = True
                litellm.telemetry = False
                litellm.disable_streaming_logging = True
                providers = [p for p in (litellm.custom_provider_map or []) if p.get("provider") != scripted.PROVIDER]
                litellm.custom_provider_map = [
                    *providers,
                    {"provider": scripted.PROVIDER, "custom_handler": scripted.make_handler()},
                ]
                from litellm.utils import custom_llm_setup

                custom_llm_setup()
                _without_tokenizer()
            finally:
                gc.freeze()
                if collecting:
                    gc.enable()
            _loaded = litellm
        return _loaded


class _NoEncoding:
    """What litellm hands a custom provider (the scripted model) as its tokenizer: nothing loaded."""

    name = "forge-estimate"

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        return [0] * ((len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def _estimate_tokens(model: Any = None, text: Any = None, messages: Any = None, **kwargs: Any) -> int:
    """litellm's token_counter, as Forge estimates tokens (chars/4)."""
    if isinstance(messages, list):
        return estimate_tokens(m for m in messages if isinstance(m, Mapping))
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN if isinstance(text, str) else 0


def _without_tokenizer() -> None:
    """Keep tiktoken's tables (~41 MB resident, seconds to load) out of the server.

    litellm prices each response as its stream starts (a hidden figure, response_cost) by counting
    the prompt with tiktoken: a whole-history tokenization per request, for a figure forge-lsp does
    not use (the cost comes from the stream's usage, cost_of). It counts by Forge's estimate instead,
    and a custom provider (the scripted model) gets no tokenizer of its own.
    """
    import litellm.cost_calculator
    import litellm.main

    if callable(getattr(litellm.cost_calculator, "token_counter", None)):
        litellm.cost_calculator.token_counter = _estimate_tokens
    if getattr(litellm.main, "_encoding_cache", "absent") is None:
        litellm.main._encoding_cache = _NoEncoding()


def library_loaded() -> bool:
    """Whether litellm is imported, set up and warm (forge.status modelLibraryLoaded); never imports it."""
    warming = _warming
    return _loaded is not None and (warming is None or not warming.is_alive())


def _warm() -> None:
    litellm = load_litellm()
    if _requested:
        return

    # litellm imports ~90 more modules (streaming, logging, tokenizer) on its first request: one
    # request to the scripted model, in this thread's own event loop, pays for them here.
    async def first_request() -> None:
        stream = await litellm.acompletion(
            model=f"{scripted.PROVIDER}/{scripted.WARM_UP}",
            messages=[{"role": "user", "content": "warm up"}],
            stream=True,
            num_retries=0,
        )
        async for _ in stream:
            pass
        await asyncio.sleep(0)

    try:
        asyncio.run(first_request())
    except Exception as exc:  # a warm-up is an optimisation: a failure only costs the first turn time
        log.debug("litellm warm-up request failed: %s", exc)


def _ready() -> Any:
    """litellm loaded, and the warm-up's request (if one runs) done: one request at a time from two
    event loops would make litellm's logging worker hop between them."""
    litellm = load_litellm()
    warming = _warming
    if warming is not None and warming is not threading.current_thread():
        warming.join(30)  # the warm-up's request goes to the scripted model: no IO, it cannot hang
    return litellm


def warm_up() -> threading.Thread | None:
    """Load litellm in a background thread (once), so the first turn does not wait for it; None where scripted
    models are served without litellm (FORGE_LSP_SCRIPTED=direct): a real model's first request loads it."""
    global _warming
    if scripted.served_directly(""):
        return None
    with _warming_lock:
        if _warming is None:
            _warming = threading.Thread(target=_warm, name="litellm-import", daemon=True)
            _warming.start()
        return _warming


def warm_up_delay(env: dict[str, str] | None = None) -> float | None:
    """How long the server waits after `initialized` before warm_up (None: never), from FORGE_LSP_WARMUP_DELAY."""
    env = dict(os.environ) if env is None else env
    value = env.get(WARM_UP_DELAY_ENV)
    if value is None:
        legacy = env.get("FORGE_LSP_PRELOAD")
        if legacy in ("0", "1"):
            return 0.0 if legacy == "1" else None
        return DEFAULT_WARM_UP_DELAY_S
    if value.strip().lower() in ("off", "never", "no", "false", ""):
        return None
    try:
        delay = float(value)
    except ValueError:
        log.warning("%s=%r is not a number of seconds: using %s", WARM_UP_DELAY_ENV, value, DEFAULT_WARM_UP_DELAY_S)
        return DEFAULT_WARM_UP_DELAY_S
    return delay if delay >= 0 else None


def resolve_model(model: str, root: Path) -> str:
    """scripted/<relative path> -> scripted/<absolute path>; other models as they are."""
    prefix = scripted.PROVIDER + "/"
    if model.startswith(prefix):
        name = model[len(prefix) :]
        if name not in scripted.BUILTIN and not Path(name).is_absolute():
            return prefix + str((root / name).resolve())
    return model


NO_KEY = "no-key-set"
"""The API key sent to a server at api_base when the provider's variable is not set (a local server ignores it)."""


def classify(
    exc: BaseException,
    status_codes: Sequence[int],
    *,
    model: str = "",
    api_base: str | None = None,
    timeout_s: float | None = None,
) -> ModelError:
    """llm.errors.classify, with litellm's view of which keys are missing when it is loaded."""
    return errors.classify(exc, status_codes, model=model, api_base=api_base, timeout_s=timeout_s, litellm=_loaded)


def _key_names(model: str, api_base: str | None, message: str) -> list[str]:
    return errors.key_names(model, api_base, message, _loaded)


def reasoning_kwargs(reasoning: dict[str, Any] | None) -> dict[str, Any]:
    """litellm's arguments for an agent's reasoning settings: reasoning_effort, or a thinking budget."""
    if not reasoning or reasoning.get("enabled") is False:
        return {}
    if reasoning.get("max_tokens"):
        return {"thinking": {"type": "enabled", "budget_tokens": int(reasoning["max_tokens"])}}
    if reasoning.get("effort"):
        return {"reasoning_effort": str(reasoning["effort"])}
    return {}


_tool_choice: dict[str, bool] = {}


def _takes_tool_choice(litellm: Any, model: str) -> bool:
    """Whether litellm sends tool_choice to this model's provider (it refuses the parameter for one that has none,
    e.g. ollama/ through /api/generate); cached per model."""
    if model not in _tool_choice:
        provider, _, name = model.partition("/") if "/" in model else ("openai", "", model)
        try:
            supported = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or ()
        except Exception:  # a provider litellm does not know: it would not know tool_choice either
            supported = ()
        _tool_choice[model] = "tool_choice" in supported
    return _tool_choice[model]


class LiteLLMModel:
    """The model port: one streamed chat completion per call, through litellm."""

    def __init__(self, config: ForgeConfig, root: Path, model: str | None = None) -> None:
        self.config = config
        self.reasoning: dict[str, Any] | None = None
        """The agent's reasoning settings (Forge's enabled, effort, max_tokens, exclude), when it has any."""
        chosen = model or config.model
        if not chosen:  # no silent default; the runtime says where to set one before it gets here
            raise ValueError("no model is set")
        self.name = chosen
        """The model as the user named it (scripted/s.json), for messages."""
        self.model = resolve_model(chosen, root)
        """The model as litellm is asked for it (a scripted model's script as an absolute path)."""
        self.server_window: int | None = None
        """The context window the model's server said it has (llama-server /props, Ollama /api/show)."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
    ) -> AssistantReply:
        """Send one request; stream text through on_text (and reasoning through on_reasoning); ModelError on failure.

        A server that cannot stream while tools are offered (llama-cpp-python's) gets this request again at once,
        unstreamed, and so do the model's later ones (local_servers)."""
        if scripted.served_directly(self.model):
            into = streaming.Collected(on_text, on_reasoning)
            try:
                await scripted.feed(self.model, messages, into)
            except Exception as exc:
                timeout_s = float(self.config.request_timeout_secs)
                raise classify(exc, self.config.retry.status_codes, model=self.name, timeout_s=timeout_s) from exc
            return into.reply(self.cost)
        # The first import takes seconds: do it off the event loop, which keeps serving meanwhile.
        global _requested
        _requested = True
        litellm = _loaded if library_loaded() else await asyncio.to_thread(_ready)
        kwargs = self.request_kwargs(litellm, messages, tools)
        api_base = self.config.api_base
        notices: list[Notice] = []
        into = streaming.Collected(on_text, on_reasoning)
        try:
            if local_servers.streams(self.model, api_base):
                try:
                    await streaming.read_stream(await litellm.acompletion(**kwargs), into)
                except Exception as exc:
                    if not (tools and into.kept == 0 and not into.calls and local_servers.refuses_streamed_tools(exc)):
                        raise
                    notice = local_servers.stop_streaming(self.model, api_base, errors.clean(str(exc)) or type(exc).__name__)
                    notices += [notice] if notice is not None else []
                    into = streaming.Collected(on_text, on_reasoning)
            if not local_servers.streams(self.model, api_base):
                whole = {k: v for k, v in kwargs.items() if k != "stream_options"}
                streaming.read_whole(await litellm.acompletion(**{**whole, "stream": False}), into)
            # litellm schedules its own success logging (cost, payload) as a task when the stream
            # ends: let it run now, inside the model call whose cost it is.
            await asyncio.sleep(0)
        except ModelError:
            raise
        except Exception as exc:  # litellm raises many types; all become ModelError
            raise classify(
                exc,
                self.config.retry.status_codes,
                model=self.name,
                api_base=api_base,
                timeout_s=float(self.config.request_timeout_secs),
            ) from exc
        reply = into.reply(self.cost, tuple(notices))
        if tools and _priced_model(self.model):  # the scripted model's usage is an estimate of the messages alone
            dropped = local_servers.tools_dropped(self.name, api_base, reply.usage.prompt_tokens, tools)
            if dropped is not None:
                reply = replace(reply, notices=(*reply.notices, dropped))
        return reply

    def request_kwargs(self, litellm: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """litellm's arguments for one streamed request."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True, "num_retries": 0}
        # Without this an OpenAI-compatible server streams no usage at all.
        kwargs["stream_options"] = {"include_usage": True}
        if tools:
            kwargs["tools"] = tools
            # Said, not left to the server: llama-cpp-python's server ignores tools without a tool_choice.
            if _takes_tool_choice(litellm, self.model):
                kwargs["tool_choice"] = "auto"
            kwargs.update(caching.cache_kwargs(litellm, self.model))
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
            if _key_names(self.model, self.config.api_base, ""):
                # A local server (llama.cpp, vLLM, LM Studio) wants no key: litellm still refuses to send without
                # one. A placeholder goes instead; a server that does check keys answers 401, said as such.
                kwargs["api_key"] = NO_KEY
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            kwargs["max_tokens"] = self.config.max_tokens
        kwargs.update(reasoning_kwargs(self.reasoning))
        kwargs["timeout"] = float(self.config.request_timeout_secs)
        # Retries are ours (each one an llmRetry event); the OpenAI SDK must not retry behind our back.
        kwargs["max_retries"] = 0
        return kwargs

    def cost(self, usage: Usage) -> float | None:
        """The request's cost from litellm's local cost map; None when the model is not priced there."""
        return cost_of(self.model, usage)

    async def prepare(self, prefix: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> tuple[Notice, ...]:
        """Before a turn's first request: learn the context window from the model's server when it says (llama-server,
        Ollama) and the user did not; warn (once) when the system prompt and tools alone fill over a quarter of it."""
        if not library_loaded() and not scripted.served_directly(self.model):
            await asyncio.to_thread(_ready)
        if self.config.context_window is None:
            self.server_window = await local_servers.server_window(self.model, self.config.api_base)
        window = self.context_window()
        if not window:
            return ()
        fixed = estimate_tokens(prefix) + local_servers.tools_tokens(tools)
        notice = local_servers.fixed_share_notice(self.name, self.config.api_base, fixed, window)
        return (notice,) if notice is not None else ()

    def context_window(self) -> int | None:
        """The model's context window: the context_window key, else what its server said (prepare), else
        max_input_tokens from litellm's model info; None when unknown."""
        return self.config.context_window or self.server_window or context_window(self.model)


def _priced_model(model: str) -> bool:
    return bool(model) and not model.startswith(scripted.PROVIDER + "/")


def cost_of(model: str, usage: Usage) -> float | None:
    """US dollars for these tokens by litellm's local cost map (cached prompt tokens at their own
    price); None for a model the map does not know: never a made-up figure."""
    if not _priced_model(model) or _loaded is None:
        return None
    try:
        prompt, completion = _loaded.cost_per_token(
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cache_read_input_tokens=usage.cached_tokens,
            cache_creation_input_tokens=usage.cache_write_tokens,
        )
        return float(prompt) + float(completion)
    except Exception:  # litellm raises for a model it cannot price
        return None


_windows: dict[str, int | None] = {}


def context_window(model: str) -> int | None:
    """max_input_tokens of a model from litellm's local model info (cached); None when unknown."""
    if model in _windows:
        return _windows[model]
    window: int | None = None
    if _priced_model(model) and _loaded is not None:
        try:
            value = _loaded.get_model_info(model).get("max_input_tokens")
            window = value if isinstance(value, int) and value > 0 else None
        except Exception:  # not mapped
            window = None
    _windows[model] = window
    return window
