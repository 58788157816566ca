"""The scripted model: a litellm custom provider fed from a JSON script.

model = "scripted/<path-or-builtin>". Each model request consumes the next
entry of {"responses": [...]}: {"text"}, {"tool_calls": [{"name",
"arguments"}]} (both may be given), or {"error": {"status", "message"?,
"retry_after"?}}; "reasoning" on a reply entry is streamed first, as the
model's reasoning_content; "delay_ms" on any entry delays it. A request past the end
answers with text "done". The position is kept per script for the process and
starts over when the script file changes.

FORGE_LSP_SCRIPTED=direct (the test suite's servers, for tests that are not about the model path) serves the
same script without litellm: the same entries, text, reasoning, tool calls, usage and errors, through
``feed``, and no litellm import (seconds of CPU) in a server that only ever talks to the scripted model.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from forge_lsp.domain.tokens import estimate_tokens
from forge_lsp.llm.builtin_scripts import BUILTIN
from forge_lsp.textfile import read_text

__all__ = ["BUILTIN", "PROVIDER", "WARM_UP", "ScriptError", "feed", "make_handler", "next_entry", "served_directly"]

PROVIDER = "scripted"
WARM_UP = "_warm-up"
"""The script the server's litellm warm-up request goes to: always "ready", no position kept."""


MODE_ENV = "FORGE_LSP_SCRIPTED"
"""'direct': scripted models are served without litellm (the test suite's default); unset or 'litellm': through
litellm's custom-provider path, as the demo and the tests of the model path run it."""


class ScriptError(Exception):
    """A script that cannot be read or has a bad entry."""


class ScriptedStatusError(Exception):
    """A script's {"error": {"status"}} entry served directly: the status and retry_after that litellm's own
    error carries on the litellm path, so that both are classified alike."""

    def __init__(self, status: int, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.retry_after = retry_after


class Timeout(ScriptedStatusError):
    """A scripted 408 served directly: litellm raises its Timeout for a custom provider's 408, and so does this."""


def served_directly(model: str, env: dict[str, str] | None = None) -> bool:
    """Whether this model (as litellm is asked for it) is a scripted one served without litellm (FORGE_LSP_SCRIPTED)."""
    mode = (os.environ if env is None else env).get(MODE_ENV, "")
    return mode.strip().lower() == "direct" and (model == "" or model.startswith(PROVIDER + "/"))


class _Cursor:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.positions: dict[str, tuple[float, int]] = {}

    def next(self, key: str, stamp: float) -> int:
        with self.lock:
            seen, pos = self.positions.get(key, (stamp, 0))
            if seen != stamp:
                pos = 0
            self.positions[key] = (stamp, pos + 1)
            return pos

    def reset(self) -> None:
        with self.lock:
            self.positions.clear()


CURSOR = _Cursor()


_parsed: dict[str, tuple[float, list[dict[str, Any]]]] = {}

MAX_SCRIPT_BYTES = 4 * 1024 * 1024
"""A larger script is refused (as a trusted workspace's trust files are: trust.MAX_TRUST_FILE_BYTES)."""


def load_script(name: str) -> tuple[list[dict[str, Any]], float]:
    """The entries of a builtin or file script, and a stamp that changes with the file."""
    if name in BUILTIN:
        return list(BUILTIN[name]["responses"]), 0.0
    path = Path(name)
    try:
        stamp = float(path.stat().st_mtime_ns)
        cached = _parsed.get(name)
        if cached is not None and cached[0] == stamp:
            return cached[1], stamp
        # The bounded reader: a script named by the user's own config may still be a FIFO or /dev/zero.
        text = read_text(path, MAX_SCRIPT_BYTES)
        if text is None:
            raise FileNotFoundError(name)
        data = json.loads(text)
    except FileNotFoundError:
        raise ScriptError(
            f"the script file {name} does not exist (and no builtin script has that name: {', '.join(BUILTIN)})"
        ) from None
    except (OSError, ValueError) as exc:  # Unusable (not a regular file, too big, not UTF-8) is a ValueError
        raise ScriptError(f"cannot read script {name}: {exc}") from None
    responses = data.get("responses") if isinstance(data, dict) else None
    if not isinstance(responses, list):
        raise ScriptError(f"{name} must hold an object with a 'responses' list")
    _parsed[name] = (stamp, responses)
    return responses, stamp


def next_entry(name: str) -> dict[str, Any]:
    """The entry for the next request to this script."""
    if name == WARM_UP:
        return {"text": "ready"}
    responses, stamp = load_script(name)
    pos = CURSOR.next(name, stamp)
    if pos >= len(responses):
        return {"text": "done"}
    entry = responses[pos]
    if not isinstance(entry, dict):
        raise ScriptError(f"entry {pos} of {name} is not an object")
    _check_entry(entry, f"entry {pos} of {name}")
    return entry


ENTRY_KEYS = ("text", "tool_calls", "error", "reasoning", "delay_ms", "usage")
CALL_KEYS = ("name", "arguments", "id")


def _check_entry(entry: dict[str, Any], where: str) -> None:
    """A misspelt key ({"txt": ...}) fails the turn, naming it: read as it is, the entry is an empty reply, which
    is retried and moves the script on without a word."""
    if unknown := [k for k in entry if k not in ENTRY_KEYS]:
        raise ScriptError(f"{where} has an unknown key {unknown[0]!r} (an entry may have: {', '.join(ENTRY_KEYS)})")
    calls = entry.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: tool_calls must be a list of calls")
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ScriptError(f"{where}: tool_calls[{i}] must be an object with a 'name'")
        if unknown := [k for k in call if k not in CALL_KEYS]:
            raise ScriptError(
                f"{where}: tool_calls[{i}] has an unknown key {unknown[0]!r} (a call may have: {', '.join(CALL_KEYS)})"
            )


def _error_spec(entry: dict[str, Any]) -> tuple[int, str, float | None]:
    spec: dict[str, Any] = entry["error"] if isinstance(entry["error"], dict) else {"status": 500, "message": str(entry["error"])}
    status = int(spec.get("status", 500))
    retry_after = float(spec["retry_after"]) if spec.get("retry_after") is not None else None
    return status, str(spec.get("message") or f"scripted error {status}"), retry_after


def _error(entry: dict[str, Any]) -> Exception:
    from litellm.llms.custom_llm import CustomLLMError

    status, message, retry_after = _error_spec(entry)
    exc = CustomLLMError(status_code=status, message=message)
    if retry_after is not None:
        exc.retry_after = retry_after
    return exc  # type: ignore[no-any-return]


def _tool_calls(entry: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(entry.get("tool_calls") or []):
        args = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                "index": i,
                "name": str(call["name"]),
                "arguments": args if isinstance(args, str) else json.dumps(args),
            }
        )
    return calls


def _usage(entry: dict[str, Any], messages: Any, completion: int) -> dict[str, int]:
    """The usage a scripted reply reports: prompt tokens estimated from the request's messages
    (chars/4, as Forge estimates), or the entry's own {"usage": {prompt_tokens, completion_tokens,
    cached_tokens}}."""
    try:
        prompt = estimate_tokens(m for m in messages or () if isinstance(m, dict))
    except (TypeError, ValueError, AttributeError):
        prompt = 0
    raw = entry.get("usage")
    given: dict[str, Any] = raw if isinstance(raw, dict) else {}
    prompt = int(given.get("prompt_tokens", prompt))
    completion = int(given.get("completion_tokens", completion))
    out = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if given.get("cached_tokens"):
        out["cache_read_input_tokens"] = int(given["cached_tokens"])
    return out


def _words(text: str) -> Iterator[str]:
    words = text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        if piece:
            yield piece


def _reasoning_chunk(piece: str) -> Any:
    """A stream chunk carrying reasoning: litellm's generic chunk has no field for it, so this one
    is a ModelResponseStream (which litellm passes through for a custom provider)."""
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    return ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(reasoning_content=piece))])


def _pieces(entry: dict[str, Any], messages: Any = None) -> Iterator[tuple[str, Any]]:
    """A reply entry in the order it is streamed, for both paths: ("reasoning", word), ("text", word),
    ("call", one of _tool_calls), then ("end", (finish_reason, usage))."""
    text = str(entry.get("text") or "")
    calls = _tool_calls(entry)
    for piece in _words(str(entry.get("reasoning") or "")):
        yield "reasoning", piece
    for piece in _words(text):
        yield "text", piece
    for call in calls:
        yield "call", call
    yield "end", ("tool_calls" if calls else "stop", _usage(entry, messages, max(1, len(text.split(" ")))))


def _chunks(entry: dict[str, Any], messages: Any = None) -> Iterator[Any]:
    for kind, value in _pieces(entry, messages):
        if kind == "reasoning":
            yield _reasoning_chunk(value)
            continue
        chunk: dict[str, Any] = {
            "text": "",
            "tool_use": None,
            "is_finished": False,
            "finish_reason": "",
            "usage": None,
            "index": 0,
        }
        if kind == "text":
            chunk["text"] = value
        elif kind == "call":
            function = {"name": value["name"], "arguments": value["arguments"]}
            chunk["tool_use"] = {"id": value["id"], "type": "function", "function": function, "index": value["index"]}
        else:
            chunk["is_finished"], (chunk["finish_reason"], chunk["usage"]) = True, value
        yield chunk


def _response(entry: dict[str, Any], model: str, messages: Any = None) -> Any:
    from litellm import ModelResponse
    from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, Usage

    calls = [
        ChatCompletionMessageToolCall(id=c["id"], type="function", function=Function(name=c["name"], arguments=c["arguments"]))
        for c in _tool_calls(entry)
    ]
    message = Message(
        role="assistant",
        content=entry.get("text") or None,
        tool_calls=calls or None,
        reasoning_content=entry.get("reasoning") or None,
    )
    return ModelResponse(
        model=model,
        choices=[Choices(index=0, finish_reason="tool_calls" if calls else "stop", message=message)],
        usage=Usage(**{k: v for k, v in _usage(entry, messages, 5).items() if k != "cache_read_input_tokens"}),
    )


def make_handler() -> Any:
    """A litellm CustomLLM instance that serves every scripted/<name> model."""
    from litellm import CustomLLM

    class ScriptedLLM(CustomLLM):  # type: ignore[misc]
        """litellm custom provider for scripted/<name>."""

        def _entry(self, model: str) -> dict[str, Any]:
            try:
                entry = next_entry(model)
            except ScriptError as exc:
                from litellm.llms.custom_llm import CustomLLMError

                raise CustomLLMError(status_code=400, message=str(exc)) from None
            return entry

        def completion(self, model: str, *args: Any, **kwargs: Any) -> Any:
            entry = self._entry(model)
            if entry.get("delay_ms"):
                time.sleep(float(entry["delay_ms"]) / 1000)
            if "error" in entry:
                raise _error(entry)
            return _response(entry, model, kwargs.get("messages", args[0] if args else None))

        async def acompletion(self, model: str, *args: Any, **kwargs: Any) -> Any:
            entry = self._entry(model)
            if entry.get("delay_ms"):
                await asyncio.sleep(float(entry["delay_ms"]) / 1000)
            if "error" in entry:
                raise _error(entry)
            return _response(entry, model, kwargs.get("messages", args[0] if args else None))

        def streaming(self, model: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
            entry = self._entry(model)
            if entry.get("delay_ms"):
                time.sleep(float(entry["delay_ms"]) / 1000)
            if "error" in entry:
                raise _error(entry)
            yield from _chunks(entry, kwargs.get("messages", args[0] if args else None))

        async def astreaming(self, model: str, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            entry = self._entry(model)
            if entry.get("delay_ms"):
                await asyncio.sleep(float(entry["delay_ms"]) / 1000)
            if "error" in entry:
                raise _error(entry)
            for chunk in _chunks(entry, kwargs.get("messages", args[0] if args else None)):
                yield chunk

    return ScriptedLLM()


async def feed(model: str, messages: Any, into: Any) -> None:
    """One request to scripted/<name> without litellm: the next entry's reasoning, text and tool calls into
    ``into`` (a streaming.Collected) piece by piece as the litellm path streams them, then its finish and usage;
    ScriptError or ScriptedStatusError as that path's errors."""
    from forge_lsp.domain.messages import Usage

    entry = next_entry(model[len(PROVIDER) + 1 :] if model.startswith(PROVIDER + "/") else model)
    if entry.get("delay_ms"):
        await asyncio.sleep(float(entry["delay_ms"]) / 1000)
    if "error" in entry:
        status, message, retry_after = _error_spec(entry)
        raise (Timeout if status == 408 else ScriptedStatusError)(status, message, retry_after)
    for kind, value in _pieces(entry, messages):
        if kind == "reasoning":
            into.add_reasoning(value)
        elif kind == "text":
            into.add_text(value)
        elif kind == "call":
            into.add_call(value["index"], value["id"], value["name"], value["arguments"])
            continue
        else:
            into.finish, usage = value
            into.usage = Usage(usage["prompt_tokens"], usage["completion_tokens"], usage.get("cache_read_input_tokens", 0))
            continue
        await asyncio.sleep(0)  # as a stream hands its pieces over: the event loop runs between them
