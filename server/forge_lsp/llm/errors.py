"""A litellm, openai or transport exception as a ModelError: its kind, whether to retry it, and words a user can
act on (which key is missing, which address did not answer, which setting to change)."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from forge_lsp.domain import retry
from forge_lsp.domain.retry import ModelError
from forge_lsp.llm import scripted

log = logging.getLogger(__name__)


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


def clean(message: str) -> str:
    previous = None
    while previous != message:
        previous, message = message, _NOISE.sub("", message, count=1)
    # litellm appends debugging hints on extra lines; the first line says it.
    return message.strip().splitlines()[0].strip() if message.strip() else ""


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def key_names(model: str, api_base: str | None, message: str, litellm: Any = None) -> list[str]:
    """Environment variables that would hold this model's key, if any is missing there."""
    missing: list[str] = []
    if litellm is not None and model:
        try:
            missing = list(litellm.validate_environment(model=model, api_base=api_base).get("missing_keys") or [])
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
    litellm: Any = None,
) -> ModelError:
    """A litellm/openai/transport exception as a ModelError: kind, retryable, and words a user can act on.

    By exception type first (litellm's ContextWindowExceededError, AuthenticationError, Timeout,
    the transport's ConnectError under litellm's InternalServerError...), then by HTTP status.
    """
    try:
        return _classify(exc, status_codes, model, api_base, timeout_s, litellm)
    except Exception:  # whatever litellm raised, the turn ends with its text, never with a crash here
        log.exception("classifying a model error")
        return ModelError(str(exc) or type(exc).__name__, False)


def _classify(
    exc: BaseException, status_codes: Sequence[int], model: str, api_base: str | None, timeout_s: float | None, litellm: Any
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
    text = clean(raw) or type(exc).__name__
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
        keys = key_names(model, api_base, raw, litellm)
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
        unset = key_names(model, api_base, raw, litellm) if api_base else []
        if unset:  # the placeholder went: the server at api_base does want a key
            return ModelError(
                f"the server at api_base {api_base} asked for an API key and {unset[0]} is not set: export it in the "
                f"environment that starts forge-lsp{where}: {text}",
                False,
                status or 401,
                kind=retry.AUTH,
            )
        keys = key_names(model, api_base, raw, litellm) or [f"{_provider(model).upper()}_API_KEY"]
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
