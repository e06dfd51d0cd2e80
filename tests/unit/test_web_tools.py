"""web_search and web_fetch against the fake web on 127.0.0.1; nothing here reaches the internet."""

import socket

import pytest

from tests.support.web_server import FakeWebServer, Page
from paicli.tools.base import MAX_FETCH_BYTES, ToolContext, ToolText, WebOptions
from paicli.tools.policy.netguard import NetworkDenied, address_denial, check_url
from paicli.tools.registry import BUILTIN_TOOLS, run_batch, run_tool
from paicli.tools.urls import extract_urls, normalize_url, web_url
from paicli.tools.builtin.web_fetch import EMPTY_HINT, web_fetch
from paicli.tools.builtin.web_search import web_search

HIT = {"title": "LangGraph 文档", "url": "https://langchain-ai.github.io/langgraph/",
       "content": "构建有状态的多智能体应用。", "engine": "duckduckgo"}


@pytest.fixture
def web():
    with FakeWebServer() as server:
        yield server


@pytest.fixture
def ctx(tmp_path, web) -> ToolContext:
    config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
    return ToolContext(root=tmp_path.resolve(), web=config)


def hits(n: int) -> list[dict]:
    return [{"title": f"t{i}", "url": f"https://site{i}.example/", "content": f"c{i}"} for i in range(1, n + 1)]


def public_dns(*addresses: str):
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)
    return resolve


# --- urls (reference o.3) ---

def test_extract_urls_strips_trailing_punctuation_and_normalizes():
    text = "看 HTTPS://Example.COM/a/#top，还有 (http://x.org/b?q=1#f). 重复 https://example.com/a。"
    assert extract_urls(text) == ["https://example.com/a", "http://x.org/b?q=1"]


def test_normalize_url_keeps_trailing_slash_when_there_is_a_query():
    assert normalize_url("http://A.org/dir/?x=1#frag") == "http://a.org/dir/?x=1"
    assert normalize_url("http://A.org/") == "http://a.org"


def test_normalize_url_is_idempotent():
    once = normalize_url("https://A.org/x//#y")
    assert once == "https://a.org/x" and normalize_url(once) == once


def test_web_url_key_matches_what_a_later_fetch_argument_extracts_to():
    url = web_url("https://en.wikipedia.org/wiki/Python_(language)")
    assert url.text == "https://en.wikipedia.org/wiki/Python_(language)"
    assert extract_urls(f'{{"url": "{url.text}"}}') == [url.key]
    assert web_url("ftp://x.org/f") is None and web_url("javascript:alert(1)") is None


# --- web_search ---

async def test_web_search_formats_each_hit_with_snippet_link_and_source(ctx, web):
    web.results = [HIT]
    assert await web_search({"query": "langgraph"}, ctx) == (
        "🔍 [SearXNG] langgraph\n\n"
        "1. LangGraph 文档\n   构建有状态的多智能体应用。\n"
        "   🔗 https://langchain-ai.github.io/langgraph/  (duckduckgo)\n\n")
    assert web.requests == ["/search?q=langgraph&format=json"]


async def test_web_search_cuts_snippets_at_200_chars(ctx, web):
    web.results = [{**HIT, "content": "字" * 250}]
    assert f"   {'字' * 200}...\n" in await web_search({"query": "q"}, ctx)


async def test_web_search_collapses_newlines_so_remote_text_cannot_fake_lines(ctx, web):
    web.results = [{**HIT, "title": "evil\n2. fake hit\n   🔗 https://evil.example", "content": "a\r\nb"}]
    result = await web_search({"query": "q"}, ctx)
    assert "1. evil 2. fake hit 🔗 https://evil.example\n   a b\n" in result
    assert result.artifact["discovered_urls"] == ["https://langchain-ai.github.io/langgraph"]


async def test_web_search_returns_top_k_hits_default_five(ctx, web):
    web.results = hits(7)
    default = await web_search({"query": "q"}, ctx)
    assert "5. t5" in default and "6. t6" not in default
    result = await web_search({"query": "q", "top_k": "2"}, ctx)
    assert "2. t2" in result and "3. t3" not in result


async def test_web_search_reports_no_results(ctx, web):
    web.results = []
    result = await web_search({"query": "无人知晓"}, ctx)
    assert result == "🔍 [SearXNG] 无人知晓\n\n未找到相关结果。"
    assert result.artifact == {"discovered_urls": []}


async def test_web_search_not_configured_names_the_env_var(tmp_path):
    result = await web_search({"query": "q"}, ToolContext(root=tmp_path))
    assert result.startswith("⚠️ 搜索") and "PAICLI_SEARXNG_URL" in result
    assert not result.ok


async def test_web_search_server_error_is_a_failure(ctx, web):
    web.search_status = 500
    result = await web_search({"query": "q"}, ctx)
    assert result == "搜索失败 (SearXNG): HTTP 500 Internal Server Error"
    assert not result.ok


async def test_web_search_unreachable_server_is_a_failure(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on once the socket closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx = ToolContext(root=tmp_path, web=WebOptions(searxng_url=f"http://127.0.0.1:{port}"))
    assert (await web_search({"query": "q"}, ctx)).startswith("搜索失败 (SearXNG): ")


async def test_web_search_blank_query(ctx):
    assert await web_search({"query": "  \n "}, ctx) == "搜索关键词不能为空"
    assert await web_search({}, ctx) == "搜索关键词不能为空"


async def test_web_search_discovers_distinct_normalized_http_urls_only(ctx, web):
    web.results = [
        {"title": "a", "url": "https://Docs.Example.com/guide/#install"},
        {"title": "dup", "url": "https://docs.example.com/guide"},
        {"title": "ftp", "url": "ftp://files.example.com/x"},
        {"title": "js", "url": "javascript:alert(1)"},
        {"title": "b", "url": "http://b.example/search?q=1"},
    ]
    result = await web_search({"query": "q"}, ctx)
    assert isinstance(result, ToolText)
    assert result.artifact == {"discovered_urls": ["https://docs.example.com/guide", "http://b.example/search?q=1"]}
    assert "2. b\n" in result and "ftp://" not in result


async def test_run_tool_and_run_batch_pass_the_artifact_through(ctx, web):
    web.results = [HIT]
    single = await run_tool("web_search", {"query": "q"}, ctx)
    batch = await run_batch([("web_search", {"query": "q"}), ("web_search", {"query": "r"})], ctx)
    expected = {"discovered_urls": ["https://langchain-ai.github.io/langgraph"]}
    assert single.artifact == expected
    assert [r.artifact for r in batch] == [expected, expected]


def test_web_tools_are_registered_async_and_parallel_safe():
    for name in ("web_search", "web_fetch"):
        assert BUILTIN_TOOLS[name].is_async and BUILTIN_TOOLS[name].parallel_safe  # reference (s.8)
    assert BUILTIN_TOOLS["web_fetch"].parameters["required"] == ["url"]


# --- web_fetch: content ---

async def test_web_fetch_converts_main_html_to_markdown_with_title(ctx, web):
    result = await web_fetch({"url": web.url("/article")}, ctx)
    head, body = result.split("\n\n---\n\n")
    assert head == f"🌐 抓取: {web.url('/article')}\n📄 标题: 示例文章\n📏 正文 {len(body)} 字符"
    assert body == "# LangGraph 简介\n\nLangGraph 用**图**来编排智能体。\n\n- 节点\n- 边\n\n详见 [文档](https://example.com/docs)。"


async def test_web_fetch_truncates_to_max_chars(ctx, web):
    result = await web_fetch({"url": web.url("/article"), "max_chars": "10"}, ctx)
    head, body = result.split("\n\n---\n\n")
    assert head.endswith("字符（已截断）") and body == "# LangGrap"


async def test_web_fetch_non_positive_max_chars_means_no_cut(ctx, web):
    web.pages["/long"] = Page("y" * 9000, content_type="text/plain")
    result = await web_fetch({"url": web.url("/long"), "max_chars": 0}, ctx)
    assert result.endswith("📏 正文 9000 字符\n\n---\n\n" + "y" * 9000)
    assert (await web_fetch({"url": web.url("/long")}, ctx)).endswith("字符（已截断）\n\n---\n\n" + "y" * 8000)


async def test_web_fetch_stops_reading_at_5_mib(ctx, web):
    result = await web_fetch({"url": web.url("/big?type=text/plain"), "max_chars": 100}, ctx)
    assert f"📏 正文 {MAX_FETCH_BYTES} 字符（已截断）" in result


async def test_web_fetch_non_2xx_is_a_failure(ctx, web):
    result = await web_fetch({"url": web.url("/missing")}, ctx)
    assert result == "抓取失败: HTTP 404 Not Found" and not result.ok


async def test_web_fetch_empty_body_warns_about_spa_or_anti_bot(ctx, web):
    web.pages["/spa"] = Page('<html><head><title>App</title></head><body><div id="root"></div>'
                             "<script>render()</script></body></html>")
    result = await web_fetch({"url": web.url("/spa")}, ctx)
    assert result.endswith(f"📄 标题: App\n📏 正文 0 字符\n\n---\n\n\n⚠️ {EMPTY_HINT}\n")


async def test_web_fetch_refuses_binary_content(ctx, web):
    web.pages["/logo.png"] = Page(b"\x89PNG", content_type="image/png")
    assert (await web_fetch({"url": web.url("/logo.png")}, ctx)).startswith("抓取失败: 不支持的内容类型: image/png")


async def test_web_fetch_blank_url(ctx):
    assert await web_fetch({"url": "  "}, ctx) == "URL 不能为空"


# --- web_fetch: network policy ---

async def test_web_fetch_refuses_file_scheme(ctx):
    result = await web_fetch({"url": "file:///etc/passwd"}, ctx)
    assert result == "❌ 网络访问被拒绝: 禁止的 scheme: file（仅允许 http、https）" and not result.ok


@pytest.mark.parametrize("url, reason", [
    ("http://10.0.0.1/", "禁止访问站内地址（10.0.0.1）"),
    ("http://192.168.1.20:8080/admin", "禁止访问站内地址（192.168.1.20）"),
    ("http://169.254.169.254/latest/meta-data/", "禁止访问链路本地地址（169.254.169.254）"),
    ("http://[::1]/", "禁止访问环回地址（::1）"),
    ("http://[::ffff:127.0.0.1]/", "禁止访问环回地址（::ffff:127.0.0.1）"),
    ("http://0.0.0.0/", "禁止访问 0.0.0.0"),
])
async def test_web_fetch_refuses_private_literal_address(ctx, url, reason):
    assert await web_fetch({"url": url}, ctx) == f"❌ 网络访问被拒绝: {reason}"


async def test_web_fetch_refuses_loopback_without_allow_list(tmp_path, web):
    result = await web_fetch({"url": web.url("/article")}, ToolContext(root=tmp_path))
    assert result == "❌ 网络访问被拒绝: 禁止访问环回地址（127.0.0.1）"
    assert web.requests == []


async def test_web_fetch_refuses_localhost_by_name(ctx):
    assert await web_fetch({"url": "http://api.localhost/"}, ctx) == "❌ 网络访问被拒绝: 禁止访问 localhost"


async def test_web_fetch_refuses_hostname_that_resolves_to_loopback(ctx, monkeypatch):
    def fake_getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)  # stdlib DNS, not our code
    result = await web_fetch({"url": "http://innocent.example/"}, ctx)
    assert result == "❌ 网络访问被拒绝: 禁止访问环回地址（127.0.0.1）"


async def test_check_url_refuses_when_any_resolved_address_is_private():
    with pytest.raises(NetworkDenied, match="站内地址（10.1.2.3）"):
        await check_url("https://mixed.example/", resolve=public_dns("93.184.216.34", "10.1.2.3"))
    await check_url("https://public.example/", resolve=public_dns("93.184.216.34", "2606:4700::1111"))


async def test_check_url_refuses_unresolvable_host():
    async def fail(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(NetworkDenied, match="无法解析主机: nowhere.example"):
        await check_url("http://nowhere.example/", resolve=fail)


@pytest.mark.parametrize("address, kind", [
    ("224.0.0.1", "组播地址"), ("ff02::1", "组播地址"), ("240.0.0.1", "保留地址"), ("::", "未指定地址"),
    ("100.64.0.1", "非公网地址"), ("fc00::1", "站内地址"), ("64:ff9b::a00:1", "站内地址"),
    ("2002:7f00:1::", "环回地址"),
])
def test_address_denial_covers_every_non_public_class(address, kind):
    assert address_denial(address) == f"禁止访问{kind}（{address}）"


def test_address_denial_allows_public_addresses():
    assert address_denial("93.184.216.34") is None and address_denial("2606:4700::1111") is None


async def test_web_fetch_refuses_redirect_from_allowed_host_to_private_address(ctx, web):
    url = web.url("/redirect?to=http://192.168.0.1/router")
    assert await web_fetch({"url": url}, ctx) == "❌ 网络访问被拒绝: 禁止访问站内地址（192.168.0.1）"


async def test_web_fetch_refuses_redirect_to_file_scheme(ctx, web):
    result = await web_fetch({"url": web.url("/redirect?to=file:///etc/passwd")}, ctx)
    assert result == "❌ 网络访问被拒绝: 禁止的 scheme: file（仅允许 http、https）"


async def test_web_fetch_follows_redirects_and_shows_the_final_url(ctx, web):
    result = await web_fetch({"url": web.url("/redirect?to=/article&status=301")}, ctx)
    assert result.startswith(f"🌐 抓取: {web.url('/article')}\n📄 标题: 示例文章\n")


async def test_web_fetch_gives_up_after_five_redirects(ctx, web):
    web.pages["/loop"] = Page("", 302, "text/plain", {"Location": "/loop"})
    assert await web_fetch({"url": web.url("/loop")}, ctx) == "抓取失败: 重定向次数过多（超过 5 次）"
    assert len(web.requests) == 6


def test_web_fetch_is_limited_to_30_requests_per_60_seconds():
    from paicli.tools.rate_limit import FixedWindow

    now = [0.0]
    window = FixedWindow(clock=lambda: now[0])
    assert all(window.refusal() is None for _ in range(30))
    now[0] = 45.2
    assert window.refusal() == "请求过于频繁（60 秒内已达 30 次上限），约 15 秒后重试"
    now[0] = 60.0  # a new window
    assert window.refusal() is None


async def test_a_refused_fetch_never_reaches_the_network(tmp_path):
    from paicli.tools.rate_limit import FixedWindow
    from paicli.tools.builtin.web_fetch import web_fetch

    with FakeWebServer() as fake:
        web = WebOptions(allow_hosts=("127.0.0.1",), fetch_limit=FixedWindow(limit=1))
        ctx = ToolContext(root=tmp_path, web=web)
        assert (await web_fetch({"url": fake.url("/article")}, ctx)).startswith("🌐 抓取: ")
        assert (await web_fetch({"url": fake.url("/article")}, ctx)).startswith("❌ 请求过于频繁")
        assert len([r for r in fake.requests if r.startswith("/article")]) == 1
