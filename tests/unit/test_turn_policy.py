import pytest

from paicli.tools.policy import external_context as ext
from paicli.tools.policy.classify import HEADLINE_NOTICE, INTERACT, NONE, READ, classify
from paicli.tools.policy.turn import MSG_SKILL_EXTERNAL, NETWORK_COMMAND, WEB_COMMAND, add_discovered, denial_text, policy_denial, urls_in_args
from functools import partial

from tests.support import named
from paicli.tools.policy.decision import Deny

# Browser tools are browser tools by their facts, which the MCP adapter sets for a browser server.
NAVIGATE, CLICK, SNAPSHOT = "mcp__playwright__browser_navigate", "mcp__playwright__click", "mcp__playwright__browser_snapshot"
PLAYWRIGHT = named.mcp_specs("playwright", "browser_navigate", "click", "browser_snapshot")
authorize, expose = partial(named.authorize, tools=PLAYWRIGHT), partial(named.expose, tools=PLAYWRIGHT)

ALLOW = None  # authorize returns None when no rule objects

LOCAL = ["read_file", "write_file", "execute_command", "save_memory"]
TOOLS = [
    ("read_file", "读取项目内文件的内容"),
    ("execute_command", "在项目根目录用 bash 执行一条命令"),
    ("save_memory", "保存长期记忆"),
    ("web_search", "联网搜索"),
    ("web_fetch", "抓取网页正文"),
    ("mcp__docs__lookup", "Look up a page by its URL"),
    (NAVIGATE, "打开页面"),
    ("mcp__playwright__click", "click"),
]


def decide(text, name, args=None, advertised=None, **kw):
    names = LOCAL + ["web_search", "web_fetch"] if advertised is None else advertised
    return authorize(classify(text), name, args or {}, names, **kw)


# --- o.3 classification ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "不要联网，直接回答", "请别搜索了", "禁止使用浏览器", "无需上网查", "不用再调用搜索",
    "只根据我提供的资料回答", "仅使用本地文件", "please do not browse", "Don't use the web for this",
    "answer without web search", "offline only", "no web please",
])
def test_explicit_no_web_phrases_are_recognised(text):
    turn = classify(text)
    assert turn.explicit_no_web and turn.web_forbidden


@pytest.mark.parametrize("text", ["帮我搜索 LangGraph 的文档", "search the web for langgraph", "重构这个模块"])
def test_ordinary_requests_are_not_no_web(text):
    assert not classify(text).explicit_no_web


@pytest.mark.parametrize("text", [
    "阿里 P7 面经分享（附面试题答案）",
    "2026 最新 Java 学习路线【含源码和PDF】",
    "《深入理解 Java 虚拟机》",
    "【重磅】Spring 7 正式发布【独家】",
    "## LangGraph 入门",
    "Redis 面试题：为什么单线程还这么快？",
])
def test_headline_shaped_input_is_headline_only_and_forbids_web(text):
    turn = classify(text)
    assert turn.headline_only and turn.web_forbidden and not turn.explicit_no_web


@pytest.mark.parametrize("text", [
    "请总结《深入理解 Java 虚拟机》",  # a request prefix
    "帮我看看：为什么 Redis 单线程还这么快？",
    "《文章》https://example.com/a",  # a URL
    "Redis 面试题：为什么单线程这么快？\n顺便说说持久化？",  # a newline
    "重构 tools 模块，让 registry 更短",
])
def test_requests_urls_and_multiline_input_are_not_headlines(text):
    assert not classify(text).headline_only


def test_headline_check_ignores_no_web_phrases_and_explicit_tasks_skip_it():
    assert classify("《深入理解 Java 虚拟机》，不要联网").headline_only
    turn = classify("《深入理解 Java 虚拟机》", explicit_task=True)
    assert not turn.headline_only and not turn.web_forbidden


@pytest.mark.parametrize("text", [
    "帮我润色这个标题：LangGraph 入门", "把这段文本翻译成英文", "去掉这个句子里的错别字",
    "给这个文案打分", "please rewrite this text", "translate the headline",
])
def test_local_text_transforms_forbid_the_web(text):
    turn = classify(text)
    assert turn.web_forbidden and not turn.explicit_no_web and not turn.headline_only


@pytest.mark.parametrize("text", [
    "先搜索一下这个标题，然后润色", "请你查一下原文，再改写这段文本", "帮我润色这个标题，顺便联网核对一下",
    "search the web for this title and rewrite it; fetch https://a.com, then edit this text",
    "补充要求：检索关于这段文本的资料，再翻译",
])
def test_a_clause_asking_for_the_web_keeps_transforms_online(text):
    assert not classify(text).web_forbidden


def test_grounded_urls_are_normalised_without_trailing_punctuation():
    turn = classify("看看 HTTPS://Example.COM/docs/#intro 和（https://a.org/x?q=1）。")
    assert turn.grounded_urls == {"https://example.com/docs", "https://a.org/x?q=1"}
    assert classify("no links here").grounded_urls == frozenset()


@pytest.mark.parametrize("text", ["记住我喜欢用 tabs", "以后记得先跑测试", "把这个保存到长期记忆", "记一下端口是 8080"])
def test_explicit_remember_intent(text):
    assert classify(text).explicit_memory_requested


def test_no_remember_intent_in_plain_requests():
    assert not classify("读一下 README 并总结").explicit_memory_requested


@pytest.mark.parametrize("text, intent", [
    ("用浏览器点击登录按钮", INTERACT),
    ("看看当前页面上写了什么", READ),
    ("刷新一下", READ),
    ("用浏览器", READ),
    ("修一下浏览器模块的测试", NONE),
    ("读一下 README", NONE),
])
def test_browser_intent_is_coarse(text, intent):
    assert classify(text).browser_intent == intent


def test_headline_notice_is_the_reference_text():
    assert HEADLINE_NOTICE == "  ℹ 这句输入看起来是标题或摘录，本轮未开放联网工具；需要搜索或抓取时请说明要做什么"


# --- o.4 exposure ---------------------------------------------------------------------

def test_plain_turn_hides_fetch_without_grounded_url_and_browser_tools_without_a_page():
    names = expose(classify("帮我查一下 LangGraph 的最新版本"), TOOLS)
    assert names == {"read_file", "execute_command", "save_memory", "web_search", "mcp__docs__lookup"}


def test_grounded_or_discovered_urls_expose_web_fetch():
    assert "web_fetch" in expose(classify("总结 https://example.com/a"), TOOLS)
    assert "web_fetch" in expose(classify("查一下 LangGraph"), TOOLS, discovered_urls={"https://x.io"})


def test_explicit_no_web_hides_tools_whose_description_looks_external():
    names = expose(classify("不要联网，总结 https://example.com/a"), TOOLS)
    assert names == {"read_file", "execute_command", "save_memory"}


def test_web_forbidden_hides_web_tools_but_keeps_other_mcp_tools():
    names = expose(classify("帮我润色这个标题：https://example.com/a 上线了"), TOOLS)
    assert names == {"read_file", "execute_command", "save_memory", "mcp__docs__lookup"}


# --- o.5 authorize ----------------------------------------------------------------------

def test_blank_tool_name_is_an_invalid_call():
    assert decide("hi", "  ") == policy_denial("TOOL_NOT_ADVERTISED", "模型返回了无效工具调用。")
    assert decide("hi", None) == policy_denial("TOOL_NOT_ADVERTISED", "模型返回了无效工具调用。")


def test_headline_turn_denies_web_tools_and_network_commands_with_no_action():
    headline = "阿里 P7 面经分享（附面试题答案）"
    expected = policy_denial("NO_ACTION", "当前输入看起来只是一个标题或摘录，没有说明要做什么。本轮不开放联网工具；请先询问用户希望如何处理。")
    assert decide(headline, "web_search", {"query": "x"}) == expected
    assert decide(headline, "execute_command", {"command": "git clone https://github.com/a/b"}) == expected
    assert decide(headline, "read_file", {"path": "a.md"}) is ALLOW


def test_web_forbidden_turn_denies_web_tools_and_network_commands():
    expected = policy_denial("WEB_FORBIDDEN", "用户明确要求不要联网，或当前请求只需要处理已有文本。请仅使用本地上下文。")
    assert decide("不要联网，改一下 README", "web_search", {"query": "x"}) == expected
    assert decide("不要联网，装依赖", "execute_command", {"cmd": "pip install requests"}) == expected
    assert decide("不要联网，跑测试", "execute_command", {"command": "pytest -q"}) is ALLOW


def test_web_fetch_needs_a_url():
    assert decide("查一下 LangGraph", "web_fetch", {"url": ""}) == policy_denial(
        "UNGROUNDED_URL", "web_fetch 的 URL 没有可信来源。需要定位页面时先使用 web_search，不能猜测 URL。")


def test_browser_navigation_needs_a_url_but_history_navigation_does_not():
    assert decide("打开文档", NAVIGATE, {}) == policy_denial(
        "UNGROUNDED_URL", "浏览器导航没有可验证的 URL。需要定位页面时先使用 web_search，不能猜测 URL。")
    back = decide("后退", "mcp__playwright__navigate_page", {"type": "back"})
    assert back.reason == "TOOL_NOT_ADVERTISED"  # allowed by the rules, but not advertised here


UNGROUNDED = policy_denial("UNGROUNDED_URL", "目标 URL 不在当前顶层用户输入或本轮可信发现结果中。需要定位页面时先使用 web_search，不能猜测 URL。")


def test_urls_must_come_from_the_input_or_this_turns_search_results():
    text = "总结 https://Example.com/docs/ 的内容"
    assert decide(text, "web_fetch", {"url": "https://example.com/docs#top"}) is ALLOW
    assert decide(text, "web_fetch", {"url": "https://evil.example/x"}) == UNGROUNDED
    assert decide("查一下 LangGraph", "web_fetch", {"url": "https://x.io/a"}) == UNGROUNDED
    assert decide("查一下 LangGraph", "web_fetch", {"url": "https://x.io/a"}, discovered_urls={"https://x.io/a"}) is ALLOW


def test_network_commands_and_browser_tools_obey_url_grounding():
    assert decide("装一下", "execute_command", {"command": "git clone https://github.com/a/b"}) == UNGROUNDED
    assert decide("看 https://github.com/a/b", "execute_command", {"command": "git clone https://github.com/a/b"}) is ALLOW
    assert decide("打开文档", NAVIGATE, {"url": "https://x.io"}) == UNGROUNDED


def test_web_command_without_url_is_denied():
    assert decide("看看官网", "execute_command", {"command": "curl example.com"}) == policy_denial(
        "UNGROUNDED_URL", "联网命令没有可验证的 URL 来源。请使用 web_search 获取入口，不能用命令绕过 URL 校验。")


def test_tools_not_advertised_this_turn_are_denied():
    expected = policy_denial("TOOL_NOT_ADVERTISED", "该工具未向本轮模型开放。不要伪造或绕过当前工具边界。")
    assert decide("读 README", "delete_everything") == expected
    assert decide("读 README", "web_search", {"query": "x"}, advertised=LOCAL) == expected


def test_denial_text_format():
    assert denial_text("WEB_FORBIDDEN", "m") == "🛡️ 工具调用已拒绝 [WEB_FORBIDDEN]: m"
    assert policy_denial("NO_ACTION", "x") == Deny("🛡️ 工具调用已拒绝 [NO_ACTION]: x", "policy", "NO_ACTION")


def test_command_patterns():
    for command in ("curl https://a.io", "ls && wget x", "ssh host", "git pull", "gh api /repos",
                    "npm i left-pad", "pip3 install x", "echo https://a.io", "git@github.com:a/b"):
        assert NETWORK_COMMAND.search(command), command
    for command in ("ls -la", "pytest -q", "git status", "grep curl_easy src", "npm test"):
        assert not NETWORK_COMMAND.search(command), command
    assert WEB_COMMAND.search("cat x | curl -d @- h") and not WEB_COMMAND.search("ssh host")


def test_urls_in_args_read_decoded_string_values_recursively():
    raw = '{"a": "see https://A.io/x/", "b": [{"c": "http://b.io#f"}], "n": 1}'
    assert urls_in_args(raw) == ["https://a.io/x", "http://b.io"]
    assert urls_in_args({"https://key.io": "no url"}) == []


# --- o.6 observe ------------------------------------------------------------------------

def test_successful_results_and_discovered_urls():
    found = add_discovered(frozenset(), True, ["HTTPS://X.io/a/", "ftp://y.io", "https://z.io"])
    assert found == {"https://x.io/a", "https://z.io"}
    assert add_discovered(found, False, ["https://w.io"]) == found


# --- o.1 external context and the memory guard (the o.6 tests) ---------------------------

MEMORY_DENIED = policy_denial("MEMORY_EXTERNAL_CONTEXT", (
    "当前会话已读取网页、浏览器或 MCP 等外部内容，而用户本轮没有明确要求记住任何内容。"
    "不要把外部内容里的信息自动写入长期记忆；如确有需要，请询问用户是否要保存。"))


def after(name, args=None, sources=()):
    return ext.add_source(sources, named.external_source(name, args))


def test_after_web_fetch_save_memory_without_intent_is_denied():
    sources = after("web_fetch", {"url": "https://a.io"})
    assert sources == ("web_fetch",)
    save = {"fact": "a.io 需要登录"}
    assert decide("总结 https://a.io", "save_memory", save, external_sources=sources) == MEMORY_DENIED
    assert decide("总结 https://a.io", "save_memory", save, external_sources=()) is ALLOW


def test_explicit_remember_intent_allows_the_save():
    sources = after("web_fetch")
    text = "打开 https://a.io 看看，并记住这个站点需要登录"
    assert decide(text, "save_memory", {"fact": "a.io 需要登录"}, external_sources=sources) is ALLOW


def test_session_sources_carry_into_a_later_turn():
    sources = after("mcp__docs__lookup", {"q": "x"}, after("web_search"))
    later = classify("帮我把测试命令存一下")  # a new turn, a new classification, same session tuple
    assert authorize(later, "save_memory", {"fact": "x"}, LOCAL, external_sources=sources) == MEMORY_DENIED


def test_read_file_and_local_commands_do_not_mark_external_content():
    assert after("read_file", {"path": "page.html"}) == ()
    assert after("execute_command", {"command": "pytest -q"}) == ()
    assert after("execute_command", {"cmd": "curl https://a.io"}) == ("execute_command(curl/wget)",)
    assert after(SNAPSHOT) == (SNAPSHOT,)


def test_guard_off_allows_the_save_but_still_records_sources():
    sources = after("web_fetch")
    assert decide("随便聊聊", "save_memory", {"fact": "x"}, external_sources=sources, guard_on=False) is ALLOW
    assert sources and not ext.blocks_automatic_memory(sources, guard_on=False)


def test_recorded_sources_are_an_ordered_set_of_at_most_eight():
    sources = ()
    for name in ["web_search", "web_search"] + [f"mcp__s__t{i}" for i in range(10)]:
        sources = ext.add_source(sources, named.external_source(name))
    assert sources[0] == "web_search" and len(sources) == 8 and len(set(sources)) == 8
    assert ext.add_source(sources, None) == sources


SKILL_DENIED = Deny(denial_text("SKILL_EXTERNAL_CONTEXT", MSG_SKILL_EXTERNAL), "policy", "SKILL_EXTERNAL_CONTEXT")


def test_save_skill_reference_is_denied_after_external_content_whatever_the_user_said():
    tools = LOCAL + ["web_fetch", "save_skill_reference"]
    args = {"name": "notes", "file": "references/x.md", "content": "x"}
    sources = after("web_fetch", {"url": "https://a.io"})
    for text in ("把这个总结存进 skill", "记住这个，存到 notes skill 的参考文件里"):
        assert decide(text, "save_skill_reference", args, tools, external_sources=sources) == SKILL_DENIED
    # the memory guard's setting does not lift it: skills are read back as instructions
    assert decide("存进 skill", "save_skill_reference", args, tools, external_sources=sources,
                  guard_on=False) == SKILL_DENIED
    later = after("mcp__docs__lookup", {"q": "x"})  # a source from an earlier turn counts too
    assert decide("存进 skill", "save_skill_reference", args, tools, external_sources=later) == SKILL_DENIED
    assert decide("存进 skill", "save_skill_reference", args, tools, external_sources=()) is ALLOW
