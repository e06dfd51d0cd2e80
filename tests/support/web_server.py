"""A fake web for the web tools: SearXNG, SerpAPI and 智谱 search plus pages, on 127.0.0.1, stdlib only.

    with FakeWebServer(results=[{"title": "T", "url": "{base}/article", "content": "..."}]) as web:
        WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))

Routes:
- ``/search?q=..&format=json``: ``{"query", "results"}``; 403 without ``format=json`` (as
  SearXNG answers when JSON output is off); ``search_status`` != 200 answers that status.
- ``/article``: a small HTML article (title "示例文章"), unless ``pages`` overrides it.
- ``/redirect?to=<url>[&status=302]``: a redirect to any URL, e.g. a private address.
- ``/big?bytes=N[&type=text/plain]``: N bytes of HTML, or of "x" as plain text (default 6 MiB), streamed.
- ``/serpapi/search.json?q=..&api_key=..``: the results in SerpAPI's shape (``organic_results``:
  ``link``, ``title``, ``snippet``, ``source``); 401 without ``api_key``.
- ``POST /zhipu/web_search`` with ``{"search_query"}`` and a bearer key: 智谱's shape
  (``search_result``: ``link``, ``title``, ``content``, ``media``); 401 without the key.
  Each POST body is kept in ``posted``, each request's headers in ``headers``.
- every path in ``pages``; anything else is 404.
``{base}`` in result and page strings becomes the server's base URL.

Standalone: `python -m tests.support.web_server --port 0 [--config web.json]` prints
`READY <base_url>` and serves until SIGTERM / Ctrl-C. The config file holds
``{"results": [...], "pages": {"/path": {"body", "status", "content_type", "headers"}},
"search_status": 200}``.
"""

from __future__ import annotations

import argparse
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.serving import serve_until_stopped

ARTICLE = """<!doctype html><html><head><meta charset="utf-8"><title>示例文章</title>
<script>var tracking = "should not appear";</script><style>p { color: red }</style></head>
<body><nav><a href="/">首页</a> | <a href="/about">关于</a></nav>
<main><h1>LangGraph 简介</h1><p>LangGraph 用<strong>图</strong>来编排智能体。</p>
<ul><li>节点</li><li>边</li></ul><p>详见 <a href="https://example.com/docs">文档</a>。</p></main>
<footer>版权所有</footer></body></html>"""
DEFAULT_RESULTS = [{"title": "示例文章", "url": "{base}/article", "content": "LangGraph 用图来编排智能体。",
                    "engine": "fake"}]
BIG_BYTES = 6 * 1024 * 1024  # more than web_fetch's 5 MiB cap
CHUNK = 64 * 1024


@dataclass
class Page:
    body: str | bytes = ""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


class FakeWebServer:
    def __init__(self, results: list[dict] | None = None, pages: dict[str, Page] | None = None, *,
                 search_status: int = 200, host: str = "127.0.0.1", port: int = 0) -> None:
        self.results = DEFAULT_RESULTS if results is None else results
        self.pages = {"/article": Page(ARTICLE), **(pages or {})}
        self.search_status = search_status
        self.requests: list[str] = []  # request paths with query, in arrival order
        self.posted: list[dict] = []  # JSON bodies of POST requests
        self.headers: list[dict[str, str]] = []  # every request's headers, lower-cased names
        self._address = (host, port)
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> FakeWebServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(self._address, handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeWebServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fill(self, value: Any) -> Any:
        """``{base}`` replaced by the base URL in every string of ``value``."""
        if isinstance(value, str):
            return value.replace("{base}", self.base_url)
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value


class _Handler(BaseHTTPRequestHandler):
    fake: FakeWebServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (web_fetch's size cap) or dropped a kept-alive connection

    def do_GET(self) -> None:
        self.fake.requests.append(self.path)
        self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        parts = urlsplit(self.path)
        self._route(parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()})

    def do_POST(self) -> None:
        self.fake.requests.append(self.path)
        self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.fake.posted.append(body)
        if urlsplit(self.path).path != "/zhipu/web_search":
            return self._send(Page(f"no page {self.path}", 404, "text/plain"))
        if not self.headers.get("Authorization", "").removeprefix("Bearer ").strip():
            return self._send(Page(json.dumps({"error": {"message": "no key"}}), 401, "application/json"))
        hits = [{"title": r.get("title"), "link": r.get("url"), "content": r.get("content"), "media": r.get("engine")}
                for r in self.fake.fill(self.fake.results)]
        self._send(Page(json.dumps({"search_result": hits}, ensure_ascii=False), 200, "application/json"))

    def _route(self, path: str, query: dict[str, str]) -> None:
        if path == "/search":
            return self._search(query)
        if path == "/serpapi/search.json":
            return self._serpapi(query)
        if path == "/redirect":
            status = int(query.get("status", "302"))
            return self._send(Page("", status, "text/plain", {"Location": query.get("to", "/")}))
        if path == "/big":
            return self._big(int(query.get("bytes", BIG_BYTES)), query.get("type", "text/html"))
        page = self.fake.pages.get(path)
        self._send(page if page is not None else Page(f"no page {path}", 404, "text/plain"))

    def _search(self, query: dict[str, str]) -> None:
        if query.get("format") != "json":
            return self._send(Page("JSON format is disabled", 403, "text/plain"))
        if self.fake.search_status != 200:
            return self._send(Page(json.dumps({"error": "boom"}), self.fake.search_status, "application/json"))
        body = {"query": query.get("q", ""), "results": self.fake.fill(self.fake.results)}
        self._send(Page(json.dumps(body, ensure_ascii=False), 200, "application/json"))

    def _serpapi(self, query: dict[str, str]) -> None:
        if not query.get("api_key"):
            return self._send(Page(json.dumps({"error": "Invalid API key."}), 401, "application/json"))
        hits = [{"position": n, "title": r.get("title"), "link": r.get("url"), "snippet": r.get("content"),
                 "source": r.get("engine")} for n, r in enumerate(self.fake.fill(self.fake.results), 1)]
        body = {"search_metadata": {"status": "Success"}, "organic_results": hits}
        self._send(Page(json.dumps(body, ensure_ascii=False), 200, "application/json"))

    def _big(self, size: int, media: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", f"{media}; charset=utf-8")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        line = b"x" * 1024 if media == "text/plain" else b"<p>" + b"x" * 1000 + b"</p>\n"
        block = (line * (CHUNK // len(line) + 1))[:CHUNK]
        sent = 0
        while sent < size:
            piece = block[: size - sent]
            self.wfile.write(piece)
            sent += len(piece)

    def _send(self, page: Page) -> None:
        body = page.body if isinstance(page.body, bytes) else self.fake.fill(page.body).encode()
        self.send_response(page.status)
        self.send_header("Content-Type", page.content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in self.fake.fill(page.headers).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def page_from_json(item: dict) -> Page:
    return Page(item.get("body", ""), item.get("status", 200),
                item.get("content_type", "text/html; charset=utf-8"), item.get("headers", {}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake SearXNG + web pages for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--config", help="JSON file: results, pages, search_status")
    args = parser.parse_args(argv)
    config: dict[str, Any] = {}
    if args.config:
        with open(args.config, encoding="utf-8") as f:
            config = json.load(f)
    pages = {path: page_from_json(item) for path, item in config.get("pages", {}).items()}
    serve_until_stopped(FakeWebServer(config.get("results"), pages, search_status=config.get("search_status", 200),
                                      host=args.host, port=args.port))


if __name__ == "__main__":
    main()
