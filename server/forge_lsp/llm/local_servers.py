"""What local model servers (llama.cpp's llama-server, llama-cpp-python's server, Ollama) do differently from a
provider's API, and how forge-lsp adapts: the context window they say they have, a server that cannot stream
tool calls, a chat template that drops the tools.

Everything learnt is remembered for the life of the process, per server address and model, and each warning is
said once: a user who starts the server again with other flags restarts forge-lsp's turn, not its memory, so the
answers are kept only when they are definite (a server that did not answer is asked again next turn).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from forge_lsp.domain.messages import CONTEXT_FIXED, NO_STREAMING, TOOLS_DROPPED, Notice
from forge_lsp.domain.tokens import CHARS_PER_TOKEN

log = logging.getLogger(__name__)

OLLAMA_BASE = "http://localhost:11434"
"""Where litellm sends an ollama/ or ollama_chat/ model without an api_base (Ollama's own default)."""
OLLAMA_PROVIDERS = ("ollama", "ollama_chat")
ASK_TIMEOUT_S = 2.0
"""How long a turn's start waits for a server to say its context window (a local server answers in ms)."""

TOOLS_DROPPED_SHARE = 0.5
"""A request whose reported prompt is below this share of what its tool definitions alone take did not carry them."""
TOOLS_DROPPED_MIN = 200
"""Tool definitions smaller than this many tokens are too few to tell (the estimate is chars/4)."""

_windows: dict[tuple[str, str], int | None] = {}
_unstreamed: set[tuple[str, str]] = set()
_warned: set[tuple[str, str, str]] = set()

# llama-cpp-python's chatml-function-calling: "Automatic streaming tool choice is not supported"; other servers
# word it their own way ("streaming is not supported with tools", "tool calls are not supported in streaming mode").
_STREAM_REFUSED = re.compile(
    r"stream\w*[^.\n]{0,40}\b(?:tool|function)s?\b[^.\n]{0,40}not (?:yet )?supported|"
    r"\b(?:tool|function)\w*[^.\n]{0,40}\bstream\w*[^.\n]{0,40}not (?:yet )?supported|"
    r"\b(?:tool|function)\w*[^.\n]{0,40}not (?:yet )?supported[^.\n]{0,40}\bstream",
    re.IGNORECASE,
)


def _key(model: str, api_base: str | None) -> tuple[str, str]:
    return (api_base or "", model)


def once(code: str, model: str, api_base: str | None) -> bool:
    """True the first time this warning is given about this model at this address (in this process)."""
    key = (code, *_key(model, api_base))
    if key in _warned:
        return False
    _warned.add(key)
    return True


def forget() -> None:
    """Forget what was learnt and said (tests; a user's restart of forge-lsp does the same)."""
    _windows.clear()
    _unstreamed.clear()
    _warned.clear()


# -- streaming ------------------------------------------------------------------------------------------------


def refuses_streamed_tools(exc: BaseException) -> bool:
    """The error says the server cannot stream a reply while tools are offered (llama-cpp-python's server)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 12:
        e = todo.pop(0)
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        if _STREAM_REFUSED.search(str(getattr(e, "message", None) or e)):
            return True
        original = getattr(e, "original_exception", None)
        todo += [original if isinstance(original, BaseException) else None, e.__cause__, e.__context__]
    return False


def streams(model: str, api_base: str | None) -> bool:
    """Whether requests to this model are streamed (False once its server refused to stream with tools)."""
    return _key(model, api_base) not in _unstreamed


def stop_streaming(model: str, api_base: str | None, cause: str) -> Notice | None:
    """Remember that this model's server cannot stream with tools; the notice to give (once), else None."""
    _unstreamed.add(_key(model, api_base))
    log.info(
        "model %s: the server refused a streamed request with tools (%s): requests are not streamed from now on", model, cause
    )
    if not once(NO_STREAMING, model, api_base):
        return None
    return Notice(
        NO_STREAMING,
        f"the model server of {model} cannot stream a reply while tools are offered ({cause}): its requests are sent "
        "unstreamed from now on, so each reply appears whole when it is done",
        "info",
    )


# -- tools the server did not pass on ---------------------------------------------------------------------------


def tools_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """About how many tokens the tool definitions take (Forge's chars/4 over their JSON)."""
    import json

    chars = sum(len(json.dumps(t, separators=(",", ":"))) for t in tools)
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def tools_dropped(model: str, api_base: str | None, prompt_tokens: int, tools: Sequence[Mapping[str, Any]]) -> Notice | None:
    """The warning (once per model) when the server's reported prompt is far smaller than the tools it was sent:
    it did not show them to the model (llama.cpp with a chat template that has no tools)."""
    expected = tools_tokens(tools)
    if not prompt_tokens or expected < TOOLS_DROPPED_MIN or prompt_tokens >= TOOLS_DROPPED_SHARE * expected:
        return None
    if not once(TOOLS_DROPPED, model, api_base):
        return None
    return Notice(
        TOOLS_DROPPED,
        f"the model server reported {prompt_tokens:,} prompt tokens for a request whose tools alone are "
        f"~{expected:,}: it probably does not pass tools to the model {model}, which then cannot call any; "
        "for llama.cpp's llama-server use --jinja and a chat template with tools (--chat-template-file), "
        "for llama-cpp-python's server --chat_format chatml-function-calling (docs/models.md)",
    )


# -- the context window -----------------------------------------------------------------------------------------


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def _base(api_base: str) -> str:
    """The server's root: llama-server's /props and Ollama's /api/show are beside /v1, not under it."""
    base = api_base.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def llama_server_window(props: Any) -> int | None:
    """n_ctx (one slot's context) from llama-server's /props."""
    settings = props.get("default_generation_settings") if isinstance(props, Mapping) else None
    return _count(settings.get("n_ctx")) if isinstance(settings, Mapping) else None


def ollama_window(show: Any) -> int | None:
    """The context Ollama runs the model with: num_ctx from /api/show's parameters, else the trained length
    (model_info's <architecture>.context_length)."""
    if not isinstance(show, Mapping):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        match = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
        if match:
            return _count(int(match.group(1)))
    info = show.get("model_info")
    if isinstance(info, Mapping):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and _count(value):
                return _count(value)
    return None


async def _ask(base: str, model: str, ollama: bool) -> tuple[int | None, bool]:
    """(the window, whether the answer is definite): llama-server's /props first, then Ollama's /api/show."""
    import httpx

    name = model.split("/", 1)[1] if "/" in model else model
    async with httpx.AsyncClient(timeout=ASK_TIMEOUT_S, follow_redirects=False, trust_env=False) as client:
        if not ollama:
            response = await client.get(f"{base}/props")
            if response.status_code == 200:
                return llama_server_window(response.json()), True
        response = await client.post(f"{base}/api/show", json={"model": name, "name": name})
        if response.status_code == 200:
            return ollama_window(response.json()), True
        return None, response.status_code in (400, 404, 405)


async def server_window(model: str, api_base: str | None) -> int | None:
    """The context window the model's server says it has: llama-server's /props (n_ctx), Ollama's /api/show
    (num_ctx); None when it says nothing (a provider's API, llama-cpp-python, a server that is down)."""
    ollama = _provider(model) in OLLAMA_PROVIDERS
    if not api_base and not ollama:
        return None
    key = _key(model, api_base)
    if key in _windows:
        return _windows[key]
    try:
        window, definite = await asyncio.wait_for(_ask(_base(api_base or OLLAMA_BASE), model, ollama), ASK_TIMEOUT_S * 2)
    except Exception as exc:  # down, slow, not JSON: the turn's request will say what is wrong
        log.debug("asking %s for its context window: %s", api_base or OLLAMA_BASE, exc)
        return None
    if definite:
        _windows[key] = window
        if window:
            log.info("model %s: the server at %s says its context window is %d tokens", model, api_base or OLLAMA_BASE, window)
    return window


def fixed_share_notice(model: str, api_base: str | None, fixed_tokens: int, window: int) -> Notice | None:
    """The warning (once per model and window) when the system prompt and tools alone take over a quarter of it."""
    if fixed_tokens * 4 <= window or not once(f"{CONTEXT_FIXED}:{window}", model, api_base):
        return None
    return Notice(
        CONTEXT_FIXED,
        f"the system prompt and tool definitions alone take ~{fixed_tokens:,} tokens, "
        f"{100 * fixed_tokens // window}% of the {window:,}-token context window of {model}: little is left for the "
        "conversation; run the model with a larger context (llama-server -c, Ollama num_ctx), use an agent with fewer "
        "tools, or set context_window if the model's window is larger than that",
    )
