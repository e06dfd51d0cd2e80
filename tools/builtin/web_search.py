"""web_search through 智谱, SerpAPI or a SearXNG instance (reference t, o.6; the back ends are
``paicli.tools.builtin.search_providers``, the choice is the settings').

The result text is the reference's; the hit URLs also travel as structured data
(``ToolText.artifact["discovered_urls"]``) because only those, never URLs in prose,
let a later web_fetch through the turn policy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from paicli.tools.base import ToolContext, failed, ToolText
from paicli.tools.builtin.search_providers import LABELS, SearchError, query
from paicli.tools.common import clamp, int_arg, str_arg
from paicli.tools.urls import WebUrl, web_url

DEFAULT_TOP_K = 5  # reference (t)
MAX_TOP_K = 20  # our cap: one SearXNG page holds about 20 hits
MAX_SNIPPET_CHARS = 200  # reference (t): snippet ≤ 200 chars + "..."
NOT_CONFIGURED = ("⚠️ 搜索功能未配置：设置 SERPAPI_API_KEY、ZHIPUAI_API_KEY，或把 PAICLI_SEARXNG_URL 设为 SearXNG "
                  "服务地址（例如 http://localhost:8888，需在 settings.yml 的 search.formats 中开启 json）")


async def web_search(args: dict[str, Any], ctx: ToolContext) -> str:
    text = one_line(str_arg(args, "query") or "")
    if not text:
        return failed("搜索关键词不能为空")
    service = ctx.web.search_service
    if service is None:
        return failed(NOT_CONFIGURED)
    top_k = clamp(int_arg(args, "top_k", DEFAULT_TOP_K) or DEFAULT_TOP_K, 1, MAX_TOP_K)
    provider = LABELS[service.kind]
    try:
        raw_hits = await query(service, text, top_k, ctx.web.timeout)
    except SearchError as exc:
        return failed(f"搜索失败 ({provider}): {exc}")
    hits = _hits(raw_hits, top_k)
    return ToolText(render(text, hits, provider), {"discovered_urls": [hit.url.key for hit in hits]})


class Hit(NamedTuple):
    url: WebUrl
    title: str
    snippet: str
    source: str  # the engine that found it, e.g. "duckduckgo"


def render(query: str, hits: list[Hit], provider: str = "SearXNG") -> str:
    head = f"🔍 [{provider}] {query}\n\n"
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
