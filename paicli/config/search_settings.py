"""Which web search a session has (issue 39; reference t, x ``SEARCH_PROVIDER``): 智谱, SerpAPI,
SearXNG, or the provider's own search where the catalog says it has one.

``PAICLI_SEARCH_PROVIDER`` = ``auto`` (default) | ``zhipu`` | ``serpapi`` | ``searxng`` | ``off``.
``auto`` takes the first that is configured: SearXNG (``PAICLI_SEARXNG_URL``), SerpAPI
(``SERPAPI_API_KEY`` or ``PAICLI_SERPAPI_KEY``), 智谱 (``ZHIPUAI_API_KEY``), then the session
provider's own search with the session's key (the catalog's ``"search"``: GLM's is 智谱's). A service
named explicitly but not configured is a setting to fix. With none, ``web_search`` is not offered
and the system prompt says there is no web search (``prompts/tools/no-web-search.md``); the
choice is made once per session, so the tool list and the prompt stay the same from turn to turn.
The URLs (``PAICLI_SERPAPI_URL``, ``PAICLI_ZHIPU_SEARCH_URL``) decide where queries and the key go,
so a project's ``.env`` may set none of these (``paicli.config.credentials``).
"""

from __future__ import annotations

from collections.abc import Callable

from paicli.config.catalog import Catalog
from paicli.config.feature_settings import ConfigError
from paicli.tools.base import SearchService

SEARCH_KEYS = ("PAICLI_SERPAPI_KEY", "SERPAPI_API_KEY")  # kept from commands' environment too
CHOICES = ("auto", "zhipu", "serpapi", "searxng", "off")
SERPAPI_URL = "https://serpapi.com/search.json"
ZHIPU_SEARCH_URL = "https://open.bigmodel.cn/api/paas/v4/web_search"


def search_service(get: Callable[[str], str | None], catalog: Catalog, provider: str,
                   key: str | None) -> SearchService | None:
    choice = (get("PAICLI_SEARCH_PROVIDER") or "auto").strip().lower()
    if choice not in CHOICES:
        raise ConfigError(f"PAICLI_SEARCH_PROVIDER 只能是 {'、'.join(CHOICES)} 之一，当前为 '{choice}'")
    own = catalog.get(provider).search if catalog.get(provider) is not None else None
    zhipu_key = get("ZHIPUAI_API_KEY") or (key if own is not None and own.kind == "zhipu" else None)
    found = {
        "searxng": SearchService("searxng", get("PAICLI_SEARXNG_URL")) if get("PAICLI_SEARXNG_URL") else None,
        "serpapi": _serpapi(get),
        "zhipu": SearchService("zhipu", get("PAICLI_ZHIPU_SEARCH_URL") or (own.url if own and own.kind == "zhipu"
                                                                          else ZHIPU_SEARCH_URL), zhipu_key)
        if zhipu_key else None,
    }
    if choice == "off":
        return None
    if choice != "auto":
        if found[choice] is None:
            raise ConfigError(f"PAICLI_SEARCH_PROVIDER={choice} 需要{NEEDS[choice]}")
        return found[choice]
    chosen = next((service for service in found.values() if service is not None), None)
    if chosen is None and own is not None and key:
        chosen = SearchService(own.kind, own.url, key)
    return chosen


NEEDS = {"searxng": " PAICLI_SEARXNG_URL（SearXNG 服务地址）", "serpapi": " SERPAPI_API_KEY",
         "zhipu": " ZHIPUAI_API_KEY（或使用 glm 服务商的 key）"}


def _serpapi(get: Callable[[str], str | None]) -> SearchService | None:
    key = get("PAICLI_SERPAPI_KEY") or get("SERPAPI_API_KEY")
    return SearchService("serpapi", get("PAICLI_SERPAPI_URL") or SERPAPI_URL, key) if key else None
