"""web_search's back ends (issue 39): SerpAPI's and 智谱's shapes against local fakes, and which
service the settings pick."""

import pytest

from paicli.config.catalog import load_catalog
from paicli.config.feature_settings import ConfigError
from paicli.config.search_settings import SERPAPI_URL, ZHIPU_SEARCH_URL, search_service
from tests.support.web_server import FakeWebServer
from paicli.tools.base import SearchService, ToolContext, WebOptions
from paicli.tools.builtin.web_search import web_search

HIT = {"title": "LangGraph 文档", "url": "https://langchain-ai.github.io/langgraph/",
       "content": "构建有状态的多智能体应用。", "engine": "duckduckgo"}
RENDERED = ("1. LangGraph 文档\n   构建有状态的多智能体应用。\n   🔗 https://langchain-ai.github.io/langgraph/  (duckduckgo)\n\n")


@pytest.fixture
def web():
    with FakeWebServer(results=[HIT, {**HIT, "url": "ftp://x.example/file"}]) as server:
        yield server


def ctx(tmp_path, service: SearchService) -> ToolContext:
    return ToolContext(root=tmp_path.resolve(), web=WebOptions(search=service))


async def test_serpapi_results_keep_the_reference_format_and_ground_their_urls(tmp_path, web):
    result = await web_search({"query": "langgraph  docs"}, ctx(tmp_path, SearchService("serpapi", web.url("/serpapi/search.json"), "serp-key")))
    assert result == "🔍 [SerpAPI] langgraph docs\n\n" + RENDERED
    assert result.artifact == {"discovered_urls": ["https://langchain-ai.github.io/langgraph"]}  # ftp is dropped
    assert "api_key=serp-key" in web.requests[0] and "q=langgraph+docs" in web.requests[0]


async def test_zhipu_results_keep_the_reference_format_and_send_the_key_as_a_bearer(tmp_path, web):
    result = await web_search({"query": "langgraph", "top_k": 1}, ctx(tmp_path, SearchService("zhipu", web.url("/zhipu/web_search"), "glm-key")))
    assert result == "🔍 [智谱] langgraph\n\n" + RENDERED
    assert web.posted == [{"search_query": "langgraph", "search_engine": "search_std", "count": 1}]
    assert web.headers[0]["authorization"] == "Bearer glm-key"


@pytest.mark.parametrize("kind, path", [("serpapi", "/serpapi/search.json"), ("zhipu", "/zhipu/web_search")])
async def test_a_refused_key_is_a_failed_search_naming_the_provider(tmp_path, web, kind, path):
    result = await web_search({"query": "x"}, ctx(tmp_path, SearchService(kind, web.url(path), "")))
    assert not result.ok and result.startswith(f"搜索失败 ({'SerpAPI' if kind == 'serpapi' else '智谱'}): HTTP 401")


def pick(env: dict[str, str], provider: str = "custom", key: str | None = None) -> SearchService | None:
    return search_service(lambda name: env.get(name), load_catalog(), provider, key)


def test_nothing_configured_is_no_search_and_the_glm_provider_has_its_own():
    assert pick({}) is None
    assert pick({}, "deepseek", "ds") is None
    assert pick({}, "glm", "glm-key") == SearchService("zhipu", ZHIPU_SEARCH_URL, "glm-key")


def test_auto_prefers_searxng_then_serpapi_then_zhipu():
    both = {"PAICLI_SEARXNG_URL": "http://127.0.0.1:8888", "SERPAPI_API_KEY": "s", "ZHIPUAI_API_KEY": "z"}
    assert pick(both).kind == "searxng"
    assert pick({k: v for k, v in both.items() if k != "PAICLI_SEARXNG_URL"}) == SearchService("serpapi", SERPAPI_URL, "s")
    assert pick({"ZHIPUAI_API_KEY": "z"}, "deepseek", "ds") == SearchService("zhipu", ZHIPU_SEARCH_URL, "z")
    assert pick({**both, "PAICLI_SEARCH_PROVIDER": "zhipu"}).kind == "zhipu"
    assert pick({**both, "PAICLI_SEARCH_PROVIDER": "off"}) is None


def test_a_service_named_but_not_configured_is_a_setting_to_fix():
    with pytest.raises(ConfigError, match="PAICLI_SEARCH_PROVIDER=serpapi 需要 SERPAPI_API_KEY"):
        pick({"PAICLI_SEARCH_PROVIDER": "serpapi"})
    with pytest.raises(ConfigError, match="只能是 auto、zhipu、serpapi、searxng、off 之一"):
        pick({"PAICLI_SEARCH_PROVIDER": "bing"})
