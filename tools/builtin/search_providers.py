"""web_search's back ends (reference t: 智谱, SerpAPI, SearXNG; issue 39), each one HTTP request that
comes back as SearXNG-shaped hits (``url``, ``title``, ``content``, ``engine``) for ``web_search``.

- ``searxng``: ``GET <base>/search?q=..&format=json`` → ``results``.
- ``serpapi``: ``GET <url>?engine=google&q=..&api_key=..&num=..`` → ``organic_results``
  (``link``, ``title``, ``snippet``, ``source``).
- ``zhipu``: ``POST <url>`` with ``{"search_query", "search_engine": "search_std", "count"}`` and the
  key as a bearer token → ``search_result`` (``link``, ``title``, ``content``, ``media``).

Which one a session uses, with which URL and key, is the settings' choice (``SearchService``).
"""

from __future__ import annotations

from typing import Any

import httpx

from paicli.tools.base import SearchService

USER_AGENT = "paicli-web-search/0.1"
LABELS = {"zhipu": "智谱", "serpapi": "SerpAPI", "searxng": "SearXNG"}
ZHIPU_ENGINE = "search_std"


class SearchError(Exception):
    pass


async def query(service: SearchService, text: str, count: int, timeout: float) -> list[dict[str, Any]]:
    try:
        async with httpx.AsyncClient(timeout=timeout, headers={"User-Agent": USER_AGENT}) as client:
            if service.kind == "searxng":
                response = await client.get(searxng_endpoint(service.url), params={"q": text, "format": "json"})
            elif service.kind == "serpapi":
                response = await client.get(service.url, params={"engine": "google", "q": text,
                                                                 "api_key": service.key or "", "num": count})
            else:
                auth = {"Authorization": f"Bearer {service.key}"} if service.key else {}
                response = await client.post(service.url, headers=auth,
                                             json={"search_query": text, "search_engine": ZHIPU_ENGINE, "count": count})
    except httpx.TimeoutException:
        raise SearchError(f"请求超时（{timeout:g} 秒）") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise SearchError(str(exc) or type(exc).__name__) from None
    if not response.is_success:
        raise SearchError(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())
    try:
        body = response.json()
    except ValueError:
        raise SearchError(f"响应不是有效的 {LABELS[service.kind]} JSON"
                          + ("（需开启 json 输出格式）" if service.kind == "searxng" else "")) from None
    return hits_of(service.kind, body)


def hits_of(kind: str, body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        return []
    if kind == "searxng":
        results = body.get("results")
        return results if isinstance(results, list) else []
    key, text, source = ("organic_results", "snippet", "source") if kind == "serpapi" else ("search_result", "content", "media")
    results = body.get(key)
    return [{"url": r.get("link"), "title": r.get("title"), "content": r.get(text), "engine": r.get(source)}
            for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def searxng_endpoint(base_url: str) -> str:
    """``<base>/search``; a base that already ends in /search is used as is."""
    base = base_url.strip().rstrip("/")
    return base if base.endswith("/search") else base + "/search"
