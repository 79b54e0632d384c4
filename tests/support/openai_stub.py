"""A scripted OpenAI-compatible HTTP server for tests: the real client path runs against it.

    with ScriptedOpenAI({"coder-model": [Reply("```cuda ...```"), Reply(status=429), ...]}) as server:
        settings = ... base_url=server.base_url ...

Replies are taken per model (the request's `model` field), or from the "*" list when a model has
no list of its own. Each successful reply carries real `usage` fields (prompt/completion tokens,
cached prompt tokens, reasoning tokens) so callers can check their accounting against
`server.usage_totals()`. Every request is recorded in `server.requests`. A request for which the
script has no reply left is answered 400 with a message saying so (not retried by clients), so a
test that makes more calls than it scripted fails loudly.

Like a real endpoint, a reply never has more completion tokens than the request's `max_completion_tokens`
(or `max_tokens`) allow. With `count_prompts=True` a reply's prompt tokens are the request's, counted as
graph.llm.prompt_tokens counts them (tiktoken), instead of the scripted number.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    prompt_tokens: int = 100
    completion_tokens: int = 50
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    delay_s: float = 0.0  # sleep before answering (for timeout tests)
    error_message: str = ""
    raw_body: str | None = None  # a 200 whose body is exactly this text (a garbled reply: not JSON, no choices)

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": self.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int
    reply: Reply | None = None

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def prompt_text(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    429: "rate_limit_exceeded",
    500: "server_error",
    502: "bad_gateway",
    503: "service_unavailable",
}


class ScriptedOpenAI:
    def __init__(self, script: dict[str, list[Reply | str]] | list[Reply | str], api_key: str | None = None, count_prompts: bool = False):
        self.count_prompts = count_prompts
        if isinstance(script, list):
            script = {"*": script}
        self._script = {model: [r if isinstance(r, Reply) else Reply(r) for r in replies] for model, replies in script.items()}
        self.api_key = api_key  # when set, any other bearer token gets a 401
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAI:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {}
                status, payload, delay = stub._answer(self.path, dict(self.headers), body)
                if delay:
                    time.sleep(delay)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- script ------------------------------------------------------------------------------
    def add(self, model: str, *replies: Reply | str) -> None:
        with self._lock:
            self._script.setdefault(model, []).extend(r if isinstance(r, Reply) else Reply(r) for r in replies)

    def remaining(self) -> dict[str, int]:
        with self._lock:
            return {m: len(r) for m, r in self._script.items() if r}

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, float]:
        with self._lock:
            model = str(body.get("model", ""))
            if not path.rstrip("/").endswith("/chat/completions"):
                self.requests.append(RecordedRequest(path, headers, body, 404))
                return 404, _error(404, f"no route {path}"), 0.0
            auth = headers.get("Authorization") or headers.get("authorization") or ""
            if self.api_key is not None and auth != f"Bearer {self.api_key}":
                self.requests.append(RecordedRequest(path, headers, body, 401))
                return 401, _error(401, "Incorrect API key provided."), 0.0
            queue = self._script.get(model) if self._script.get(model) else self._script.get("*")
            if not queue:
                self.requests.append(RecordedRequest(path, headers, body, 400))
                return 400, _error(400, f"scripted server: no reply left for model {model!r}"), 0.0
            reply = _as_billed(queue.pop(0), body, self.count_prompts)
            self.requests.append(RecordedRequest(path, headers, body, reply.status, reply))
            if reply.status != 200:
                return reply.status, _error(reply.status, reply.error_message or f"scripted HTTP {reply.status}"), reply.delay_s
            if reply.raw_body is not None:
                return 200, reply.raw_body, reply.delay_s
            return (
                200,
                {
                    "id": f"chatcmpl-{len(self.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}],
                    "usage": reply.usage(),
                },
                reply.delay_s,
            )

    # -- what was served ---------------------------------------------------------------------
    def answered(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.status == 200]

    def usage_totals(self) -> dict[str, int]:
        served = [r.reply for r in self.answered() if r.reply is not None]
        return {
            "input_tokens": sum(r.prompt_tokens for r in served),
            "output_tokens": sum(r.completion_tokens for r in served),
            "cached_tokens": sum(r.cached_tokens for r in served),
            "reasoning_tokens": sum(r.reasoning_tokens for r in served),
        }


def _as_billed(reply: Reply, body: dict[str, Any], count_prompts: bool) -> Reply:
    """The reply with the usage a real endpoint would bill for this request."""
    from dataclasses import replace

    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None and reply.completion_tokens > int(limit):
        reply = replace(reply, completion_tokens=int(limit))
    if count_prompts:
        from graph.llm import prompt_tokens

        texts = [str(m.get("content", "")) for m in body.get("messages", [])]
        system = texts[0] if len(texts) > 1 else ""
        reply = replace(reply, prompt_tokens=prompt_tokens(system, "\n".join(texts[1:] if len(texts) > 1 else texts)))
    return reply


def _error(status: int, message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(status, "error"),
            "param": None,
            "code": _ERROR_TYPES.get(status, str(status)),
        }
    }
