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
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from forge_lsp.domain import retry
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.messages import MAX_REPLY_CHARS, AssistantReply, ToolCall, Usage
from forge_lsp.domain.retry import ModelError
from forge_lsp.domain.tokens import CHARS_PER_TOKEN, estimate_tokens
from forge_lsp.llm import scripted

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


def warm_up() -> threading.Thread:
    """Load litellm in a background thread (once), so the first turn does not wait for it."""
    global _warming
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


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and what caused it (litellm wraps the SDK's error, which wraps httpx's...)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 12:
        e = todo.pop(0)
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        original = getattr(e, "original_exception", None)
        todo += [original if isinstance(original, BaseException) else None, e.__cause__, e.__context__]
    return seen


def _retry_after(exc: BaseException) -> float | None:
    value = getattr(exc, "retry_after", None)
    if value is None:
        for attr in ("response", "litellm_response_headers"):
            holder = getattr(exc, attr, None)
            headers = getattr(holder, "headers", holder)
            try:
                value = headers.get("retry-after") if headers is not None else None
            except (AttributeError, TypeError):
                value = None
            if value is not None:
                break
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None  # an HTTP date: rare from model APIs; the backoff applies


def _request_url(chain: list[BaseException]) -> str | None:
    """The URL the call went to, from the transport's error (litellm's own carry placeholders)."""
    for e in chain:
        if type(e).__module__.split(".")[0] not in {"httpx", "openai"}:
            continue
        try:
            request = e.request  # type: ignore[attr-defined]
        except (AttributeError, RuntimeError):  # httpx raises RuntimeError when unset
            continue
        url = getattr(request, "url", None)
        if url is not None:
            return str(url)
    return None


def _origin(url: str) -> str:
    """scheme://host:port of a URL: where a connection was attempted."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else url


# litellm prefixes each message with its class names ("litellm.RateLimitError: RateLimitError:
# OpenAIException - ..."): noise for a user, stripped.
_NOISE = re.compile(r"^\s*(?:litellm\.\w+:\s*|Timeout Error:\s+|\w+(?:Error|Exception):\s+|\w+Exception\s+-\s+)")
_MODEL_MISSING = re.compile(
    r"model_not_found|model\b[^.\n]{0,80}\b(?:not found|does not exist|not exist)|no such model|unknown model|"
    r"invalid model|model not found|LLM Provider NOT provided",
    re.IGNORECASE,
)
_NO_PROVIDER = re.compile(r"LLM Provider NOT provided")
_KEY_MISSING = re.compile(
    r"missing credentials|missing [\w ]{0,40}api key|api[_ ]key[^.\n]{0,40}(?:not set|must be set|missing)", re.I
)
_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*_(?:API_KEY|AUTH_TOKEN|ACCESS_KEY_ID|KEY)\b")
_CONNECT_TEXT = re.compile(r"cannot connect to host|connect call failed|connection refused|name or service not known", re.I)
_TIMEOUT_STATUSES = (408,)


def _clean(message: str) -> str:
    previous = None
    while previous != message:
        previous, message = message, _NOISE.sub("", message, count=1)
    # litellm appends debugging hints on extra lines; the first line says it.
    return message.strip().splitlines()[0].strip() if message.strip() else ""


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def _key_names(model: str, api_base: str | None, message: str) -> list[str]:
    """Environment variables that would hold this model's key, if any is missing there."""
    missing: list[str] = []
    if _loaded is not None and model:
        try:
            missing = list(_loaded.validate_environment(model=model, api_base=api_base).get("missing_keys") or [])
        except Exception:  # an unknown provider: litellm raises; the message is all there is
            missing = []
    keys = [k for k in missing if k.endswith(("_KEY", "_TOKEN", "_KEY_ID"))]
    if not keys:
        keys = [k for k in dict.fromkeys(_ENV_NAME.findall(message)) if k not in os.environ]
    return keys


def _is(e: BaseException, *names: str) -> bool:
    """e is an instance of a class of one of these names (litellm's, openai's or httpx's classes:
    matched by name along the MRO so that classify needs no import of litellm, and works on the
    SDK's own exceptions too)."""
    return any(c.__name__ in names for c in type(e).__mro__)


def classify(
    exc: BaseException,
    status_codes: Sequence[int],
    *,
    model: str = "",
    api_base: str | None = None,
    timeout_s: float | None = None,
) -> ModelError:
    """A litellm/openai/transport exception as a ModelError: kind, retryable, and words a user can act on.

    By exception type first (litellm's ContextWindowExceededError, AuthenticationError, Timeout,
    the transport's ConnectError under litellm's InternalServerError...), then by HTTP status.
    """
    try:
        return _classify(exc, status_codes, model, api_base, timeout_s)
    except Exception:  # whatever litellm raised, the turn ends with its text, never with a crash here
        log.exception("classifying a model error")
        return ModelError(str(exc) or type(exc).__name__, False)


def _classify(
    exc: BaseException, status_codes: Sequence[int], model: str, api_base: str | None, timeout_s: float | None
) -> ModelError:
    chain = _chain(exc)
    status: int | None = None
    for e in chain:
        code = getattr(e, "status_code", None)
        if isinstance(code, int) and 100 <= code <= 599:
            status = code
            break
    retry_after = next((r for r in map(_retry_after, chain) if r is not None), None)
    raw = next((str(getattr(e, "message", None) or e) for e in chain if str(getattr(e, "message", None) or e).strip()), "")
    text = _clean(raw) or type(exc).__name__
    where = f" (model {model})" if model else ""

    script = next((e for e in chain if _is(e, "ScriptError")), None)
    if script is not None:  # the scripted model's own script: nothing was sent anywhere
        return ModelError(f"scripted model: {script}{where}", False, kind=retry.SCRIPT)
    if _NO_PROVIDER.search(raw):
        # litellm's own check before any request: its BadRequestError carries a 400 nobody answered.
        return ModelError(
            f"unknown model {model or text}: litellm knows no provider for it; name it provider/model "
            "(e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, ollama/qwen3); nothing was sent",
            False,
            kind=retry.PROVIDER,
        )
    if any(_is(e, "ContextWindowExceededError") for e in chain):
        return ModelError(
            f"the conversation no longer fits in the context window of {model or 'the model'}: compact it "
            f"(forge.compact, or a lower [compact] token_threshold), start a new conversation (forge.newConversation) "
            f"or set a model with a larger window: {text}",
            False,
            status,
            kind=retry.CONTEXT_WINDOW,
        )
    if _KEY_MISSING.search(raw):
        # Only when the key really is absent here: a server's own "missing key" 401 with a key set
        # is an authentication failure, below.
        keys = _key_names(model, api_base, raw)
        if keys:
            names = " or ".join(keys)
            return ModelError(
                f"{names} is not set: export it in the environment that starts forge-lsp{where}",
                False,
                kind=retry.CREDENTIALS,
            )
    answered = any(_is(e, "HTTPStatusError") for e in chain)  # the server sent a status (litellm maps 408 to Timeout)
    if not answered and any(
        _is(e, "Timeout", "APITimeoutError", "TimeoutException", "TimeoutError", "SocketTimeoutError") for e in chain
    ):
        after = f" after {timeout_s:g} s" if timeout_s else ""
        return ModelError(
            f"model request timed out{after}{where}: set request_timeout_secs to wait longer",
            True,
            kind=retry.TIMEOUT,
        )
    refused = any(_is(e, "ConnectError", "ClientConnectorError", "ConnectionRefusedError", "gaierror") for e in chain) or bool(
        _CONNECT_TEXT.search(raw)
    )
    if refused:
        url = _request_url(chain) or api_base
        if url is None:
            match = re.search(r"host ([\w.\-\[\]:]+:\d+)", raw)
            url = f"http://{match.group(1)}" if match else None
        target = _origin(url) if url else (api_base or "the model server")
        hint = f" (api_base = {api_base})" if api_base else ""
        return ModelError(
            f"cannot connect to {target}{hint}: is the model server running there?",
            True,
            kind=retry.CONNECT,
        )
    if status == 401 or any(_is(e, "AuthenticationError") for e in chain):
        unset = _key_names(model, api_base, raw) if api_base else []
        if unset:  # the placeholder went: the server at api_base does want a key
            return ModelError(
                f"the server at api_base {api_base} asked for an API key and {unset[0]} is not set: export it in the "
                f"environment that starts forge-lsp{where}: {text}",
                False,
                status or 401,
                kind=retry.AUTH,
            )
        keys = _key_names(model, api_base, raw) or [f"{_provider(model).upper()}_API_KEY"]
        check = "" if _provider(model) == scripted.PROVIDER else f": check {keys[0]} in the environment that starts forge-lsp"
        return ModelError(
            f"the API key was refused{where}{check}: {text}",
            False,
            status or 401,
            kind=retry.AUTH,
        )
    if status == 403 or any(_is(e, "PermissionDeniedError") for e in chain):
        return ModelError(
            f"permission denied{where}: this key may not use this model: {text}", False, status or 403, kind=retry.PERMISSION
        )
    if status == 404 or any(_is(e, "NotFoundError") for e in chain) or _MODEL_MISSING.search(raw):
        base = f" at api_base {api_base}" if api_base else ""
        return ModelError(
            f"model not found{where}{base}: check the model setting (provider/model, e.g. openai/gpt-4o){' and api_base' if api_base else ''}: {text}",
            False,
            status,
            kind=retry.NOT_FOUND,
        )
    if status in (400, 422) or any(_is(e, "BadRequestError", "UnprocessableEntityError") for e in chain):
        return ModelError(f"the model rejected the request{where}: {text}", False, status, kind=retry.BAD_REQUEST)
    if status == 429 or any(_is(e, "RateLimitError") for e in chain):
        return ModelError(
            f"rate limited{where}: {text}", 429 in status_codes or status is None, status, retry_after, retry.RATE_LIMIT
        )
    if status in _TIMEOUT_STATUSES:
        return ModelError(
            f"the model server timed out{where}: {text}", status in status_codes, status, retry_after, retry.TIMEOUT
        )
    if isinstance(status, int):
        return ModelError(f"the model server failed{where}: {text}", status in status_codes, status, retry_after, retry.SERVER)
    if any(_is(e, "APIConnectionError", "ConnectionError", "RemoteProtocolError", "ReadError") for e in chain):
        url = _request_url(chain) or api_base
        to = f" to {_origin(url)}" if url else ""
        return ModelError(f"the connection{to} was lost{where}: {text}", True, kind=retry.SERVER)
    return ModelError(text, False, kind=retry.OTHER)


def reasoning_kwargs(reasoning: dict[str, Any] | None) -> dict[str, Any]:
    """litellm's arguments for an agent's reasoning settings: reasoning_effort, or a thinking budget."""
    if not reasoning or reasoning.get("enabled") is False:
        return {}
    if reasoning.get("max_tokens"):
        return {"thinking": {"type": "enabled", "budget_tokens": int(reasoning["max_tokens"])}}
    if reasoning.get("effort"):
        return {"reasoning_effort": str(reasoning["effort"])}
    return {}


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

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
    ) -> AssistantReply:
        """Send one request; stream text through on_text (and reasoning through on_reasoning); ModelError on failure."""
        # The first import takes seconds: do it off the event loop, which keeps serving meanwhile.
        global _requested
        _requested = True
        litellm = _loaded if library_loaded() else await asyncio.to_thread(_ready)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True, "num_retries": 0}
        # Without this an OpenAI-compatible server streams no usage at all.
        kwargs["stream_options"] = {"include_usage": True}
        if tools:
            kwargs["tools"] = tools
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
        text: list[str] = []
        kept = 0
        thought: list[str] = []
        thought_kept = 0
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Usage | None = None
        try:
            stream = await litellm.acompletion(**kwargs)
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = read_usage(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                reasoning = getattr(delta, "reasoning_content", None)
                if isinstance(reasoning, str) and reasoning and thought_kept < MAX_REPLY_CHARS:
                    thought.append(reasoning[: MAX_REPLY_CHARS - thought_kept])
                    thought_kept += len(thought[-1])
                    if on_reasoning is not None:
                        on_reasoning(thought[-1])
                if delta.content:
                    # One past the cap is kept, so the orchestrator sees the reply was cut (and marks it).
                    if kept <= MAX_REPLY_CHARS:
                        text.append(delta.content[: MAX_REPLY_CHARS + 1 - kept])
                        kept += len(text[-1])
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
            raise classify(
                exc,
                self.config.retry.status_codes,
                model=self.name,
                api_base=self.config.api_base,
                timeout_s=float(self.config.request_timeout_secs),
            ) from exc
        tool_calls = tuple(
            ToolCall(id=c["id"] or f"call_{uuid.uuid4().hex[:16]}", name=c["name"], arguments_json=c["arguments"])
            for _, c in sorted(calls.items())
        )
        reply = "".join(text)
        if not reply.strip() and not tool_calls:
            raise ModelError("the model sent an empty reply", retryable=True, kind=retry.EMPTY)
        if usage is None:  # the provider reported none: the tokens are not known, nor is the cost
            usage = Usage(cost=None, requests=1)
        else:
            usage = Usage(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, self.cost(usage), 1)
        return AssistantReply(reply, tool_calls, finish, usage, "".join(thought) or None)

    def cost(self, usage: Usage) -> float | None:
        """The request's cost from litellm's local cost map; None when the model is not priced there."""
        return cost_of(self.model, usage)

    def context_window(self) -> int | None:
        """The model's input window (max_input_tokens) from litellm's model info; None when unknown."""
        return context_window(self.model)


def read_usage(u: Any) -> Usage:
    """A litellm usage object as Usage (cost not yet set): cached tokens from prompt_tokens_details."""

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    details = getattr(u, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if not cached:
        cached = getattr(u, "cache_read_input_tokens", None)
    return Usage(count(getattr(u, "prompt_tokens", 0)), count(getattr(u, "completion_tokens", 0)), count(cached))


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
