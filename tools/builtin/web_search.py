"""web_search through a SearXNG instance's JSON API (reference t, o.6).

The result text is the reference's; the hit URLs also travel as structured data
(``ToolText.artifact["discovered_urls"]``) because only those, never URLs in prose,
let a later web_fetch through the turn policy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import httpx

from tools.base import ToolContext, failed, ToolText
from tools.common import clamp, int_arg, str_arg
from tools.urls import WebUrl, web_url

PROVIDER = "SearXNG"
DEFAULT_TOP_K = 5  # reference (t)
MAX_TOP_K = 20  # our cap: one SearXNG page holds about 20 hits
MAX_SNIPPET_CHARS = 200  # reference (t): snippet ≤ 200 chars + "..."
NOT_CONFIGURED = ("⚠️ 搜索功能未配置：请把环境变量 PAICLI_SEARXNG_URL 设为 SearXNG 服务地址"
                  "（例如 http://localhost:8888，需在 settings.yml 的 search.formats 中开启 json）")
USER_AGENT = "paicli-web-search/0.1"


async def web_search(args: dict[str, Any], ctx: ToolContext) -> str:
    query = one_line(str_arg(args, "query") or "")
    if not query:
        return failed("搜索关键词不能为空")
    if not ctx.web.searxng_url:
        return failed(NOT_CONFIGURED)
    top_k = clamp(int_arg(args, "top_k", DEFAULT_TOP_K) or DEFAULT_TOP_K, 1, MAX_TOP_K)
    try:
        raw_hits = await _query(ctx.web.searxng_url, query, ctx.web.timeout)
    except _SearchError as exc:
        return failed(f"搜索失败 ({PROVIDER}): {exc}")
    hits = _hits(raw_hits, top_k)
    return ToolText(render(query, hits), {"discovered_urls": [hit.url.key for hit in hits]})


class Hit(NamedTuple):
    url: WebUrl
    title: str
    snippet: str
    source: str  # the engine that found it, e.g. "duckduckgo"


def render(query: str, hits: list[Hit]) -> str:
    head = f"🔍 [{PROVIDER}] {query}\n\n"
    if not hits:
        return head + "未找到相关结果。"
    return head + "".join(_render_hit(n, hit) for n, hit in enumerate(hits, 1))


def _render_hit(number: int, hit: Hit) -> str:
    snippet = f"   {hit.snippet}\n" if hit.snippet else ""
    source = f"  ({hit.source})" if hit.source else ""
    return f"{number}. {hit.title}\n{snippet}   🔗 {hit.url.text}{source}\n\n"


def one_line(text: object) -> str:
    """Remote text on one line, so a title cannot fake a line of our own output."""
    return " ".join(text.split()) if isinstance(text, str) else ""


def _snippet(text: object) -> str:
    flat = one_line(text)
    return flat if len(flat) <= MAX_SNIPPET_CHARS else flat[:MAX_SNIPPET_CHARS] + "..."


def _hits(raw_hits: list[Any], top_k: int) -> list[Hit]:
    """The first ``top_k`` distinct http(s) hits; others could not be fetched anyway."""
    hits: list[Hit] = []
    seen: set[str] = set()
    for raw in raw_hits:
        url = web_url(raw.get("url")) if isinstance(raw, dict) else None
        if url is None or url.key in seen:
            continue
        seen.add(url.key)
        title = one_line(raw.get("title")) or "(无标题)"
        hits.append(Hit(url, title, _snippet(raw.get("content")), one_line(raw.get("engine"))))
        if len(hits) == top_k:
            break
    return hits


class _SearchError(Exception):
    pass


async def _query(base_url: str, query: str, timeout: float) -> list[Any]:
    try:
        async with httpx.AsyncClient(timeout=timeout, headers={"User-Agent": USER_AGENT}) as client:
            response = await client.get(search_endpoint(base_url), params={"q": query, "format": "json"})
    except httpx.TimeoutException:
        raise _SearchError(f"请求超时（{timeout:g} 秒）") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise _SearchError(str(exc) or type(exc).__name__) from None
    if not response.is_success:
        raise _SearchError(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())
    try:
        results = response.json().get("results")
    except (ValueError, AttributeError):
        raise _SearchError("响应不是有效的 SearXNG JSON（需开启 json 输出格式）") from None
    return results if isinstance(results, list) else []


def search_endpoint(base_url: str) -> str:
    """``<base>/search``; a base that already ends in /search is used as is."""
    base = base_url.strip().rstrip("/")
    return base if base.endswith("/search") else base + "/search"
