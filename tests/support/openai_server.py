"""A loopback OpenAI-compatible server for tests: scripted behaviours, SSE streaming, faults."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStub:
    """Serves /v1/chat/completions on 127.0.0.1; each request takes the next behaviour.

    Behaviours: {"text": str} | {"tool": name, "arguments": str} (either with "usage": {prompt_tokens,
    completion_tokens, cached_tokens}: reported when the request asks, stream_options.include_usage;
    either with "reasoning": str, streamed first as reasoning_content deltas) | {"status": int, "headers": {...},
    "body": {...}} | {"reset": True} | {"hang": seconds} | {"empty": True}. Past the end: text "done".
    """

    def __init__(self, behaviours: list[dict[str, Any]], port: int = 0) -> None:
        self.behaviours = list(behaviours)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
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

    def respond(self, h: BaseHTTPRequestHandler, body: dict[str, Any], b: dict[str, Any]) -> None:
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
    def _usage_chunk(model: str, given: dict[str, int] | None) -> bytes:
        u = {"prompt_tokens": 11, "completion_tokens": 7, **(given or {})}
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
        chunks.append(self._chunk(model, {}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does: a last chunk with no choices carries the usage, only when asked for.
            chunks.append(self._usage_chunk(model, b.get("usage")))
        chunks.append(b"data: [DONE]\n\n")
        for c in chunks:
            h.wfile.write(c)
            h.wfile.flush()
        h.close_connection = True

    @staticmethod
    def _whole(h: BaseHTTPRequestHandler, model: str, b: dict[str, Any]) -> None:
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
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool" in b else "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            }
        ).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)


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
    stub = OpenAIStub(behaviours, port=args.port)
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
