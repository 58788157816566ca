"""A loopback OpenAI-compatible server for tests: scripted behaviours, SSE streaming, faults."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SERVERS = ("openai", "llama-server", "llama-cpp-python", "ollama")


class OpenAIStub:
    """Serves /v1/chat/completions on 127.0.0.1; each request takes the next behaviour.

    Behaviours: {"text": str} | {"tool": name, "arguments": str} (either with "usage": {prompt_tokens,
    completion_tokens, cached_tokens}: reported when the request asks, stream_options.include_usage;
    either with "reasoning": str, streamed first as reasoning_content deltas; either with "finish": a
    finish_reason, e.g. "length" for a reply cut at the token limit; without "usage", the prompt's tokens are
    estimated from the request's length, ~4 characters each, tools included) | {"status": int, "headers": {...},
    "body": {...}} | {"reset": True} | {"hang": seconds} | {"empty": True}. Past the end: text "done".

    ``server`` makes it behave as a local model server does: "llama-server" (llama.cpp: /props, a prompt cache, a
    template that may drop the tools), "llama-cpp-python" (refuses to stream tool_choice "auto", ignores tools
    without a tool_choice) or "ollama" (/api/show); "openai" (the default) as OpenAI. tests/llama_server checks
    the llama-server ways against the real one.
    """

    def __init__(
        self,
        behaviours: list[dict[str, Any]],
        port: int = 0,
        *,
        server: str = "openai",
        n_ctx: int = 8192,
        template_tools: bool = True,
    ) -> None:
        if server not in SERVERS:
            raise ValueError(f"server is one of {SERVERS}")
        self.behaviours = list(behaviours)
        self.requests: list[dict[str, Any]] = []
        self.gets: list[str] = []
        """The paths of GET (and Ollama's /api/show) requests, in order."""
        self.lock = threading.Lock()
        self.server_kind = server
        self.n_ctx = n_ctx
        """The context window the server says it has (llama-server /props, Ollama /api/show num_ctx)."""
        self.template_tools = template_tools
        """llama-server: whether its chat template renders the tools (SmolLM2's own does not: they are dropped)."""
        self.last_prompt = ""
        """llama-server: the prompt its slot holds, as rendered (the prefix a next request may reuse)."""
        self.cached_prefixes: set[str] = set()
        """Anthropic (/v1/messages): the prefixes up to a cache_control breakpoint of earlier requests."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                with stub.lock:
                    stub.gets.append(self.path)
                found = stub.get(self.path)
                stub.send_json(self, 200 if found is not None else 404, found or {"error": "Not Found"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/api/show"):
                    with stub.lock:
                        stub.gets.append(self.path)
                    found = stub.ollama_show(body)
                    stub.send_json(self, 200 if found is not None else 404, found or {"error": "not found"})
                    return
                refusal = stub.refusal(body)
                if refusal is not None:
                    with stub.lock:
                        stub.requests.append(
                            {
                                "path": self.path,
                                "body": body,
                                "auth": self.headers.get("Authorization"),
                                "at": time.perf_counter(),
                            }
                        )
                    stub.send_json(self, 500, {"error": {"message": refusal, "type": "internal_server_error"}})
                    return
                with stub.lock:
                    stub.requests.append(
                        {"path": self.path, "body": body, "auth": self.headers.get("Authorization"), "at": time.perf_counter()}
                    )
                    behaviour = stub.behaviours.pop(0) if stub.behaviours else {"text": "done"}
                try:
                    stub.respond(self, body, behaviour)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to report

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- the local servers' ways ---------------------------------------------------------------------------

    @staticmethod
    def send_json(h: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)

    def get(self, path: str) -> dict[str, Any] | None:
        """A GET: llama-server's /props and /v1/models say the slot's context size (n_ctx); others have neither."""
        path = path.split("?", 1)[0]
        if self.server_kind == "llama-server" and path == "/props":
            return {
                "default_generation_settings": {"n_ctx": self.n_ctx, "params": {"n_predict": -1}},
                "total_slots": 1,
                "model_path": "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
                "chat_template": "{% for message in messages %}...{% endfor %}",
                "build_info": "b0000-stub",
            }
        if path.endswith("/models"):
            meta = {"meta": {"n_ctx": self.n_ctx, "n_ctx_train": 8192}} if self.server_kind == "llama-server" else {}
            return {"object": "list", "data": [{"id": "local", "object": "model", "owned_by": self.server_kind, **meta}]}
        return None

    def ollama_show(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Ollama's POST /api/show: the model's trained context (model_info) and the num_ctx it runs with (parameters)."""
        if self.server_kind != "ollama":
            return None
        return {
            "modelfile": "FROM smollm2:135m",
            "parameters": f'num_ctx                        {self.n_ctx}\nstop                           "<|im_end|>"',
            "template": "{{ .Prompt }}",
            "details": {"family": "llama", "parameter_size": "134.52M", "quantization_level": "F16"},
            "model_info": {"general.architecture": "llama", "llama.context_length": 8192},
            "capabilities": ["completion", "tools"],
        }

    def refusal(self, body: dict[str, Any]) -> str | None:
        """llama-cpp-python's server (chatml-function-calling) cannot stream a tool choice of "auto": it answers 500."""
        if (
            self.server_kind == "llama-cpp-python"
            and body.get("stream")
            and body.get("tools")
            and body.get("tool_choice") == "auto"
        ):
            return "Automatic streaming tool choice is not supported"
        return None

    def render(self, body: dict[str, Any]) -> str:
        """The prompt as a ChatML template with tools renders it (Qwen2.5's, which llama-server ships): the system
        message, then the tools, then the conversation; without tools in the template, the tools are left out."""
        messages = list(body.get("messages") or [])
        system = ""
        if messages and messages[0].get("role") == "system":
            system = _text(messages.pop(0).get("content"))
        tools = body.get("tools") if self.template_tools else None
        out = f"<|im_start|>system\n{system}"
        if tools:
            out += "\n\n# Tools\n\n<tools>\n" + "\n".join(json.dumps(t) for t in tools) + "\n</tools>"
        out += "<|im_end|>\n"
        for m in messages:
            calls = "".join(f"<tool_call>{json.dumps(c.get('function'))}</tool_call>" for c in m.get("tool_calls") or ())
            out += f"<|im_start|>{m.get('role')}\n{_text(m.get('content'))}{calls}<|im_end|>\n"
        return out + "<|im_start|>assistant\n"

    def local_usage(self, body: dict[str, Any], reply: str) -> dict[str, int]:
        """llama-server's usage: the prompt's tokens (~4 characters each), of which those its slot already held
        (the common prefix with the last prompt) are cached_tokens and not evaluated again."""
        prompt = self.render(body)
        common = 0
        for a, b in zip(prompt, self.last_prompt, strict=False):
            if a != b:
                break
            common += 1
        self.last_prompt = prompt + reply
        return {"prompt_tokens": -(-len(prompt) // 4), "completion_tokens": max(1, len(reply) // 4), "cached_tokens": common // 4}

    def as_served(self, body: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        """The behaviour as this server would answer it: tools it never showed the model are not called (the model
        answers in prose), a reply longer than max_tokens words is cut there (finish_reason "length")."""
        b = dict(b)
        if "tool" in b and (
            (self.server_kind == "llama-cpp-python" and not body.get("tool_choice"))
            or (self.server_kind == "llama-server" and not self.template_tools)
        ):
            b = {"text": f"To do that I would use {b.pop('tool')}.", **{k: v for k, v in b.items() if k != "arguments"}}
        limit = body.get("max_tokens")
        if self.server_kind != "openai" and isinstance(limit, int) and "text" in b and len(b["text"].split(" ")) > limit:
            b["text"] = " ".join(b["text"].split(" ")[:limit])
            b["finish"] = "length"
        if self.server_kind == "llama-server" and "usage" not in b and ("text" in b or "tool" in b):
            b["usage"] = self.local_usage(body, b.get("text") or b.get("arguments") or "")
        return b

    def anthropic_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Anthropic's prompt cache: only up to a block marked cache_control, and read only where an earlier request
        marked the same prefix. input_tokens are the rest (Anthropic counts cached tokens apart)."""
        blocks: list[tuple[str, bool]] = []
        for tool in body.get("tools") or ():
            blocks.append((json.dumps({k: v for k, v in tool.items() if k != "cache_control"}), "cache_control" in tool))
        system = body.get("system") or []
        for part in [{"text": system}] if isinstance(system, str) else system:
            blocks.append((str(part.get("text", "")), "cache_control" in part))
        for m in body.get("messages") or ():
            content = m.get("content")
            for part in [{"text": content}] if isinstance(content, str) else content or ():
                text = {k: v for k, v in part.items() if k != "cache_control"}
                blocks.append((m.get("role", "") + json.dumps(text), "cache_control" in part))
        prefix, marks, bounds = "", [], []
        for text, marked in blocks:
            prefix += text
            bounds.append(prefix)
            if marked:
                marks.append(prefix)
        total = len(prefix)
        written = max((len(m) for m in marks), default=0)
        # A breakpoint also finds what an earlier request cached at a block before it (Anthropic looks back).
        read = max((len(b) for b in bounds if len(b) <= written and b in self.cached_prefixes), default=0)
        self.cached_prefixes.update(marks)
        return {
            "input_tokens": max(1, (total - max(read, written)) // 4),
            "cache_read_input_tokens": read // 4,
            "cache_creation_input_tokens": max(0, written - read) // 4,
        }

    def anthropic(self, h: BaseHTTPRequestHandler, body: dict[str, Any], b: dict[str, Any]) -> None:
        """Anthropic's /v1/messages, streamed (as litellm asks for it): text or one tool_use block."""
        usage = {**self.anthropic_usage(body), "output_tokens": 1}
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_stub",
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model", "claude"),
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            )
        ]
        if "tool" in b:
            start = {"type": "tool_use", "id": "toolu_stub1", "name": b["tool"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": b["arguments"]}
            stop = "tool_use"
        else:
            start, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": b.get("text", "done")}, "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 9}},
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        for name, data in events:
            h.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            h.wfile.flush()
        h.close_connection = True

    def respond(self, h: BaseHTTPRequestHandler, body: dict[str, Any], b: dict[str, Any]) -> None:
        if h.path.endswith("/messages") and "status" not in b:
            self.anthropic(h, body, b)
            return
        b = self.as_served(body, b)
        if b.get("reset"):
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            h.connection.close()
            return
        if "hang" in b:
            time.sleep(float(b["hang"]))
        if "status" in b:
            payload = json.dumps(b.get("body") or {"error": {"message": f"stub error {b['status']}", "type": "stub"}}).encode()
            h.send_response(int(b["status"]))
            for k, v in (b.get("headers") or {}).items():
                h.send_header(k, str(v))
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
            return
        model = body.get("model", "stub")
        if body.get("stream"):
            self._stream(h, model, b, body)
        else:
            self._whole(h, model, b)

    @staticmethod
    def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage:
            data["usage"] = usage
        return f"data: {json.dumps(data)}\n\n".encode()

    @staticmethod
    def _usage_chunk(model: str, given: dict[str, int] | None, prompt_tokens: int) -> bytes:
        u = {"prompt_tokens": prompt_tokens, "completion_tokens": 7, **(given or {})}
        usage: dict[str, Any] = {
            "prompt_tokens": u["prompt_tokens"],
            "completion_tokens": u["completion_tokens"],
            "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
        }
        if u.get("cached_tokens"):
            usage["prompt_tokens_details"] = {"cached_tokens": u["cached_tokens"]}
        data = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        return f"data: {json.dumps({**data, 'choices': [], 'usage': usage})}\n\n".encode()

    def _stream(self, h: BaseHTTPRequestHandler, model: str, b: dict[str, Any], body: dict[str, Any]) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        chunks = [self._chunk(model, {"role": "assistant", "content": ""})]
        for word in b.get("reasoning", "").split(" ") if b.get("reasoning") else ():
            # As DeepSeek and litellm-proxied reasoning models do: the thinking first, as reasoning_content.
            chunks.append(self._chunk(model, {"reasoning_content": word + " "}))
        if "text" in b:
            for word in b["text"].split(" "):
                chunks.append(self._chunk(model, {"content": word + " "}))
            finish = "stop"
        elif "tool" in b:
            args = b["arguments"]
            half = len(args) // 2
            call0 = {
                "index": 0,
                "id": "call_stub1",
                "type": "function",
                "function": {"name": b["tool"], "arguments": args[:half]},
            }
            chunks.append(self._chunk(model, {"tool_calls": [call0]}))
            chunks.append(self._chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]}))
            finish = "tool_calls"
        else:  # empty: no content, no tool call
            finish = "stop"
        chunks.append(self._chunk(model, {}, b.get("finish", finish)))
        if (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does: a last chunk with no choices carries the usage, only when asked for.
            chunks.append(self._usage_chunk(model, b.get("usage"), prompt_estimate(h)))
        chunks.append(b"data: [DONE]\n\n")
        for c in chunks:
            h.wfile.write(c)
            h.wfile.flush()
        h.close_connection = True

    @staticmethod
    def _whole(h: BaseHTTPRequestHandler, model: str, b: dict[str, Any]) -> None:
        u = {"prompt_tokens": prompt_estimate(h), "completion_tokens": 7, **(b.get("usage") or {})}
        usage: dict[str, Any] = {
            "prompt_tokens": u["prompt_tokens"],
            "completion_tokens": u["completion_tokens"],
            "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
        }
        if u.get("cached_tokens"):
            usage["prompt_tokens_details"] = {"cached_tokens": u["cached_tokens"]}
        message: dict[str, Any] = {"role": "assistant", "content": b.get("text")}
        if "tool" in b:
            message["tool_calls"] = [
                {"id": "call_stub1", "type": "function", "function": {"name": b["tool"], "arguments": b["arguments"]}}
            ]
        payload = json.dumps(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": b.get("finish", "tool_calls" if "tool" in b else "stop")}
                ],
                "usage": usage,
            }
        ).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)


def prompt_estimate(h: BaseHTTPRequestHandler) -> int:
    """The prompt tokens a server would report for this request, ~4 characters of its body a token (its messages
    and tools; a fixed small figure made forge-lsp warn that the server drops the tools). From the body's length:
    no second pass over a long history's JSON in the benchmarks' model time."""
    return -(-int(h.headers.get("Content-Length", 0)) // 4)


def _text(content: Any) -> str:
    """A message's content as text (a list of parts: their text, as a template joins them)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


USAGE = """python -m tests.support.openai_server [--port PORT] [BEHAVIOURS.json]

A loopback OpenAI-compatible model server (127.0.0.1 only), to try forge-lsp over HTTP without a provider
or an API key. BEHAVIOURS.json is a JSON list of what each request gets, in order (see OpenAIStub), e.g.
[{"text": "hello"}, {"status": 429, "headers": {"Retry-After": "1"}}]; past the end, or without one, every
request is answered with the text "done". Ctrl-C stops it."""


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C, saying on stdout where and what to put in .forge.toml."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m tests.support.openai_server", usage=USAGE)
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    parser.add_argument("behaviours", nargs="?", help="a JSON file: a list of behaviours, one a request")
    parser.add_argument("--server", choices=SERVERS, default="openai", help="behave as this server does (default openai)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the context window llama-server/Ollama say they have")
    parser.add_argument("--no-template-tools", action="store_true", help="llama-server: a chat template without tools")
    args = parser.parse_args(argv)
    behaviours: list[dict[str, Any]] = []
    if args.behaviours:
        try:
            with open(args.behaviours, encoding="utf-8") as f:
                behaviours = json.load(f)
        except (OSError, ValueError) as exc:
            print(f"openai_server: cannot read {args.behaviours}: {exc}", file=sys.stderr)
            return 1
        if not isinstance(behaviours, list) or not all(isinstance(b, dict) for b in behaviours):
            print(f"openai_server: {args.behaviours} must hold a JSON list of objects", file=sys.stderr)
            return 1
    stub = OpenAIStub(behaviours, port=args.port, server=args.server, n_ctx=args.n_ctx, template_tools=not args.no_template_tools)
    print(
        f"serving an OpenAI-compatible model at {stub.url} (Ctrl-C stops it); in .forge.toml:\n"
        f'  model = "openai/local"\n  api_base = "{stub.url}"\n'
        'then `forge-lsp run "hello" --trust` (no API key needed: any model name after openai/ will do)',
        flush=True,
    )
    try:
        stub.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stub.server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
