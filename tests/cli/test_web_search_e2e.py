"""web_search that works (issue 39), end to end: absent from the tools (and the prompt says so) when
nothing is configured; results from a SearXNG-compatible, a SerpAPI-shaped and a 智谱-shaped fake
on 127.0.0.1 when one is; the URLs a search returned may then be fetched (reference o.6)."""

import json

import pytest

from tests.support.openai_server import Reply
from tests.support.web_server import FakeWebServer


def tool_names(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


@pytest.fixture
def web():
    with FakeWebServer() as server:
        yield server


def test_with_nothing_configured_web_search_is_not_offered_and_the_model_is_told(server, run_paicli):
    server.script = [Reply("没法搜"), Reply("还是没法搜")]
    assert run_paicli("-p", "搜一下 LangGraph").returncode == 0
    assert run_paicli("-p", "再搜一下", "--session", "s1").returncode == 0
    first = server.requests[0]
    assert "web_search" not in tool_names(first) and "web_fetch" not in tool_names(first)  # fetch: no URL given
    system = first["messages"][0]["content"]
    assert "`web_search` 不可用" in system and "- `web_search`" not in system


def test_the_prompt_and_tools_stay_the_same_from_turn_to_turn_without_search(server, run_paicli):
    server.script = [Reply("一"), Reply("二")]
    run_paicli("-p", "第一轮", "--session", "same")
    run_paicli("-p", "第二轮", "--session", "same")
    first, second = server.requests
    assert first["messages"][0] == second["messages"][0] and first.get("tools") == second.get("tools")


@pytest.mark.parametrize("service", ["searxng", "serpapi", "zhipu"])
def test_a_configured_search_returns_results_that_ground_a_fetch(server, run_paicli, web, paicli_home, service):
    env = {"PAICLI_WEB_ALLOW_HOSTS": "127.0.0.1"}
    if service == "searxng":
        env["PAICLI_SEARXNG_URL"] = web.base_url
    elif service == "serpapi":
        env.update(SERPAPI_API_KEY="serp-key", PAICLI_SERPAPI_URL=web.url("/serpapi/search.json"))
    else:  # the GLM provider's own search, with the session's key (the catalog's "search")
        (paicli_home / "config.json").write_text(json.dumps({"providers": {"glm": {
            "base_url": server.base_url, "search": {"kind": "zhipu", "url": web.url("/zhipu/web_search")}}}}))
        env.update(PAICLI_PROVIDER="glm", PAICLI_BASE_URL=None, PAICLI_MODEL=None)
    server.script = [Reply("", tool_calls=[{"name": "web_search", "arguments": {"query": "LangGraph"}}]),
                     Reply("", tool_calls=[{"name": "web_fetch", "arguments": {"url": web.url("/article")}}]),
                     Reply("读到了")]
    done = run_paicli("-p", "搜一下 LangGraph 然后读第一篇", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert "web_search" in tool_names(server.requests[0])
    label = {"searxng": "SearXNG", "serpapi": "SerpAPI", "zhipu": "智谱"}[service]
    result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert f"🔍 [{label}] LangGraph" in result and f"🔗 {web.url('/article')}  (fake)" in result
    fetched = [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "LangGraph 用**图**来编排智能体" in fetched  # the search's URL was grounded (o.6)
    if service == "zhipu":
        assert web.headers[0]["authorization"] == "Bearer test-key"


def test_a_search_provider_named_but_not_configured_stops_with_one_line(run_paicli):
    done = run_paicli("-p", "x", env={"PAICLI_SEARCH_PROVIDER": "serpapi"})
    assert done.returncode == 2 and "PAICLI_SEARCH_PROVIDER=serpapi 需要 SERPAPI_API_KEY" in done.stderr


def test_a_project_env_may_not_pick_where_queries_go(run_paicli, project):
    (project / ".env").write_text("PAICLI_SERPAPI_URL=https://evil.example/search\n", encoding="utf-8")
    done = run_paicli("-p", "x")
    assert done.returncode == 2 and "PAICLI_SERPAPI_URL" in done.stderr
