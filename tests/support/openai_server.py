"""A scripted OpenAI-compatible server on 127.0.0.1, stdlib only.

End-to-end tests point the real `langchain-openai` / `langchain-deepseek` clients at it, so
streaming, usage, tool-call deltas and HTTP errors go through the real client code.

    with FakeOpenAIServer([ErrorReply(429, {...}, {"retry-after-ms": "1"}), Reply("hi")]) as server:
        ChatOpenAI(base_url=server.base_url, api_key="x", model="m", stream_usage=True)

Standalone: `python -m tests.support.openai_server --port 0 --script s.json [--echo]`
prints `READY <base_url>` and serves until SIGTERM / Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.serving import serve_until_stopped

# The auto reviewer's system prompt (paicli.tools.policy.auto_review): its requests are told apart by it.
REVIEWER_SYSTEM = (Path(__file__).resolve().parents[2] / "prompts" / "approvals" / "reviewer-system.md").read_text(
    encoding="utf-8").strip()


def is_review_request(request: dict) -> bool:
    messages = request.get("messages") or [{}]
    return messages[0].get("role") == "system" and messages[0].get("content") == REVIEWER_SYSTEM


def verdict(decision: str, reason: str = "测试审查") -> "Reply":
    """A reviewer reply as the prompt asks for it."""
    return Reply(json.dumps({"decision": decision, "reason": reason}, ensure_ascii=False))


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    """`{"name", "arguments": str | dict, "id"?}`; arguments strings are sent verbatim."""
    reasoning_content: str | None = None
    usage: tuple[int, int] | None = None
    """(prompt_tokens, completion_tokens); estimated from the text when omitted."""
    finish_reason: str | None = "auto"
    """"auto": "tool_calls" with calls, else "stop"; None: no finish chunk (a cut-off stream)."""
    done: bool = True
    """False: the stream ends (the connection closes cleanly) without `data: [DONE]`."""
    drop_after: int | None = None
    """Close the socket after this many SSE events, short of the promised Content-Length,
    so the client sees the connection drop mid-stream."""


@dataclass
class ErrorReply:
    status: int
    body: dict = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Wait `seconds` (cut short when the server stops), then answer `then`."""

    seconds: float
    then: Reply | ErrorReply = field(default_factory=lambda: Reply("(hang over)"))


@dataclass
class Disconnect:
    """Close the connection without answering (a server or proxy dropping the request)."""


Item = Reply | ErrorReply | Hang | Disconnect | Callable[[dict], Any]


class RecordedRequest(dict):
    """A request body (dict) that also carries `.headers` (lower-cased names) and `.path`."""

    def __init__(self, body: dict, headers: dict[str, str], path: str) -> None:
        super().__init__(body)
        self.headers, self.path = headers, path


CACHE_SPELLINGS = ("openai", "deepseek", "kimi")
USAGE_PLACES = ("top", "choice", "both")


class FakeOpenAIServer:
    """``prefix_cache``: None (no cache figures, the default) or the provider spelling
    ("openai": ``prompt_tokens_details.cached_tokens``, also GLM's; "deepseek":
    ``prompt_cache_hit_tokens``; "kimi": top-level ``cached_tokens``) in which usage reports
    as cached the start of the request's messages that repeats the previous request's (4 chars
    a token, like the estimate).

    ``stream_usage_at``: where a stream reports usage. "top" (OpenAI's way): a trailing chunk
    with no choices and a top-level ``usage``, sent when the request asks for it
    (``stream_options.include_usage``). "choice" (Moonshot's way): ``choices[0].usage`` of the
    finish chunk, always, and no top-level usage. "both": the two, the same figures twice."""

    def __init__(self, script: Sequence[Item] = (), *, echo: bool = False,
                 host: str = "127.0.0.1", port: int = 0, prefix_cache: str | None = None,
                 stream_usage_at: str = "top") -> None:
        assert prefix_cache in (None, *CACHE_SPELLINGS), prefix_cache
        assert stream_usage_at in USAGE_PLACES, stream_usage_at
        self.script = list(script)
        self.echo = echo
        self.prefix_cache = prefix_cache
        self.stream_usage_at = stream_usage_at
        self.requests: list[RecordedRequest] = []
        # The auto reviewer's requests get their replies from ``reviews`` and are recorded in
        # ``review_requests``, apart from the conversation's, so a script reads as the turn it is.
        self.reviews: list[Item] = []
        self.review_requests: list[RecordedRequest] = []
        self.exhausted_hits = 0
        # GET /models: the ids it reports, and the headers of each such request (issue 39).
        self.models: list[str] = ["fake-model"]
        self.model_requests: list[dict[str, str]] = []
        self._cursor = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._address = (host, port)
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def remaining(self) -> int:
        return len(self.script) - self._cursor

    def assert_consumed(self) -> None:
        """Fail if replies were left unused or a request found the script empty."""
        if self.remaining() or self.exhausted_hits or self.reviews:
            raise AssertionError(f"FakeOpenAIServer: {self.remaining()} repl(ies) unused, {len(self.reviews)} "
                                 f"review repl(ies) unused, {self.exhausted_hits} request(s) after the script ended")

    def start(self) -> FakeOpenAIServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(self._address, handler)
        self._httpd.daemon_threads = True  # a hung handler must not block interpreter exit
        # A short poll interval keeps stop() (and so every test) from waiting 0.5 s.
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes Hang sleepers
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _review(self, request: RecordedRequest) -> Reply | ErrorReply | Disconnect:
        with self._lock:
            self.review_requests.append(request)
            if not self.reviews:
                self.exhausted_hits += 1
                return _exhausted(0)
            item = self.reviews.pop(0)
        return self._resolve(item, request)

    def take(self, request: RecordedRequest) -> Reply | ErrorReply | Disconnect:
        """Record the request and resolve the next script item into a reply."""
        if is_review_request(request):
            return self._review(request)
        with self._lock:
            self.requests.append(request)
            if self._cursor >= len(self.script):
                if self.echo:
                    return _echo(request)
                self.exhausted_hits += 1
                return _exhausted(len(self.script))
            item = self.script[self._cursor]
            self._cursor += 1
        return self._resolve(item, request)

    def _resolve(self, item: Item, request: RecordedRequest) -> Reply | ErrorReply | Disconnect:
        """A script item as the reply it stands for: a callable is asked, a ``Hang`` waited out."""
        if callable(item):
            item = item(request)
        if isinstance(item, Hang):
            self._stopping.wait(item.seconds)
            item = item.then
        return item


class ByContent:
    """Replies chosen by what a request says, for clients that call in no fixed order (Plan tasks
    running in parallel): the first key found in the request's user messages takes its next
    reply. ``server.script = routes.script()``; ``arrivals`` records (key, monotonic time) per
    request, so a test can tell whether two requests overlapped."""

    def __init__(self, routes: dict[str, Sequence[Reply | ErrorReply | Hang | Disconnect]]) -> None:
        self.routes = {key: list(items) for key, items in routes.items()}
        self.arrivals: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def script(self) -> list[Item]:
        return [self.reply] * sum(len(items) for items in self.routes.values())

    def reply(self, request: dict) -> Reply | ErrorReply | Hang | Disconnect:
        users = [m.get("content") for m in request.get("messages", []) if m.get("role") == "user"]
        text = "\n".join(u if isinstance(u, str) else json.dumps(u, ensure_ascii=False) for u in users)
        with self._lock:
            for key, items in self.routes.items():
                if key in text and items:
                    self.arrivals.append((key, time.monotonic()))
                    return items.pop(0)
        error = {"message": f"ByContent: no reply left for: {text[-200:]}", "type": "server_error"}
        return ErrorReply(500, {"error": error}, {"x-should-retry": "false"})

    def left(self) -> dict[str, int]:
        return {key: len(items) for key, items in self.routes.items() if items}


def _exhausted(steps: int) -> ErrorReply:
    # x-should-retry: false stops the openai client from retrying, so the test fails fast.
    error = {"message": f"FakeOpenAIServer: script exhausted after {steps} repl(ies)",
             "type": "server_error", "code": "script_exhausted"}
    return ErrorReply(500, {"error": error}, {"x-should-retry": "false"})


def _echo(request: dict) -> Reply:
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    text = users[-1].get("content", "") if users else ""
    return Reply(f"echo: {text if isinstance(text, str) else json.dumps(text)}")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        if not self.path.rstrip("/").endswith("/models"):
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        self.fake.model_requests.append({k.lower(): v for k, v in self.headers.items()})
        models = [{"id": m, "object": "model", "created": 0, "owned_by": "paicli"} for m in self.fake.models]
        self._json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(json.loads(raw or b"{}"), headers, self.path)
        reply = self.fake.take(request)
        try:
            self._send(reply, request, max(1, len(self.fake.requests)))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout / cancel): nothing left to tell it

    def _send(self, reply: Reply | ErrorReply | Disconnect, request: dict, number: int) -> None:
        if isinstance(reply, Disconnect):
            self.close_connection = True
            return
        if isinstance(reply, ErrorReply):
            return self._json(reply.status, reply.body, reply.headers)
        completion = _Completion(reply, request, number, self._cache_usage(request, number))
        if not request.get("stream"):
            return self._json(200, completion.whole())
        asked = (request.get("stream_options") or {}).get("include_usage", False)
        place = self.fake.stream_usage_at
        events = [f"data: {json.dumps(event)}\n\n".encode()
                  for event in completion.chunks(asked and place != "choice", place != "top")]
        events += [b"data: [DONE]\n\n"] if reply.done else []
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if reply.drop_after is not None:
            # A promised length the body never reaches is what a dropped connection looks like
            # over HTTP/1.0; without it, closing the socket would be a clean end of the body.
            self.send_header("Content-Length", str(sum(map(len, events))))
            events = events[:reply.drop_after]
        self.end_headers()
        for event in events:
            self.wfile.write(event)
            self.wfile.flush()
        if reply.drop_after is not None:
            self.close_connection = True

    def _cache_usage(self, request: dict, number: int) -> dict:
        spelling = self.fake.prefix_cache
        if spelling is None:
            return {}
        previous = json.dumps(self.fake.requests[number - 2].get("messages", [])) if number > 1 else ""
        cached = len(os.path.commonprefix([previous, json.dumps(request.get("messages", []))])) // 4
        return {"openai": {"prompt_tokens_details": {"cached_tokens": cached}},
                "deepseek": {"prompt_cache_hit_tokens": cached},
                "kimi": {"cached_tokens": cached}}[spelling]

    def _json(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Completion:
    """Renders one Reply as a chat.completion or as chat.completion.chunk events."""

    def __init__(self, reply: Reply, request: dict, number: int, cache_usage: dict | None = None) -> None:
        self.reply = reply
        self.base = {"id": f"chatcmpl-{number}", "created": int(time.time()),
                     "model": request.get("model", "fake-model")}
        self.calls = [_wire_call(c, f"call_{number}_{i}") for i, c in enumerate(reply.tool_calls)]
        auto = "tool_calls" if self.calls else "stop"
        self.finish = auto if reply.finish_reason == "auto" else reply.finish_reason
        self.usage = {**_usage(reply, request, self.calls), **(cache_usage or {})}

    def whole(self) -> dict:
        message = {"role": "assistant", "content": self.reply.content or None}
        if self.calls:
            message["tool_calls"] = self.calls
        if self.reply.reasoning_content is not None:
            message["reasoning_content"] = self.reply.reasoning_content
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": self.finish}
        return {**self.base, "object": "chat.completion", "choices": [choice], "usage": self.usage}

    def chunks(self, include_usage: bool, usage_in_choice: bool = False) -> Iterator[dict]:
        yield self._chunk({"role": "assistant", "content": ""})
        for piece in _pieces(self.reply.reasoning_content or ""):
            yield self._chunk({"reasoning_content": piece})
        for piece in _pieces(self.reply.content):
            yield self._chunk({"content": piece})
        for index, call in enumerate(self.calls):
            head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
            yield self._chunk({"tool_calls": [{"index": index, **head}]})
            for piece in _pieces(call["function"]["arguments"]):
                yield self._chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        if self.finish is not None:
            finish = self._chunk({}, self.finish)
            if usage_in_choice:
                finish["choices"][0]["usage"] = self.usage
            yield finish
        if include_usage:
            yield {**self.base, "object": "chat.completion.chunk", "choices": [], "usage": self.usage}

    def _chunk(self, delta: dict, finish: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**self.base, "object": "chat.completion.chunk", "choices": [choice]}


def _wire_call(call: dict, default_id: str) -> dict:
    args = call.get("arguments", {})
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"id": call.get("id") or default_id, "type": "function",
            "function": {"name": call["name"], "arguments": arguments}}


def _usage(reply: Reply, request: dict, calls: list[dict]) -> dict:
    # Rough 4-characters-per-token estimate; tests that care pass `usage` explicitly.
    prompt, completion = reply.usage or (
        max(1, len(json.dumps(request.get("messages", []))) // 4),
        max(1, (len(reply.content) + len(json.dumps(calls))) // 4))
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _pieces(text: str, parts: int = 3) -> list[str]:
    """Split text into up to `parts` fragments, like a provider's token deltas."""
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


def item_from_json(item: dict) -> Item:
    """`{"content", "tool_calls", "reasoning_content", "usage", "finish_reason", "done",
    "drop_after"}`, `{"error", "body", "headers"}`, `{"hang": seconds, "then": {...}}` or
    `{"disconnect": true}`."""
    if item.get("disconnect"):
        return Disconnect()
    if "hang" in item:
        then = item_from_json(item["then"]) if "then" in item else Reply("(hang over)")
        return Hang(item["hang"], then)
    if "error" in item:
        return ErrorReply(item["error"], item.get("body", {}), item.get("headers", {}))
    usage = tuple(item["usage"]) if item.get("usage") else None
    return Reply(item.get("content", ""), item.get("tool_calls", []),
                 item.get("reasoning_content"), usage, item.get("finish_reason", "auto"),
                 item.get("done", True), item.get("drop_after"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of reply items")
    parser.add_argument("--echo", action="store_true", help="echo the user once the script ends")
    args = parser.parse_args(argv)
    script = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            script = [item_from_json(i) for i in json.load(f)]
    serve_until_stopped(FakeOpenAIServer(script, echo=args.echo, host=args.host, port=args.port))


if __name__ == "__main__":
    main()
