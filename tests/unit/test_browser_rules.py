"""Issue 40: the browser's exposure and authorisation rules (reference o.3–o.6), shared-mode
pages, sensitive pages, the tool lines; pure functions on plain data."""

from __future__ import annotations

import pytest

from paicli.tools.browser import rules
from paicli.tools.browser.display import browser_line
from paicli.tools.browser.facts import CONNECT, mcp_facts
from paicli.tools.browser.intent import INTERACT, NONE, READ, browser_turn
from paicli.tools.browser.names import action_of
from paicli.tools.browser.rules import BrowserState, BrowserView, Page
from paicli.tools.browser.sensitive import SensitivePages
from paicli.tools.policy.classify import classify
from paicli.tools.policy.decision import Ask, Deny
from functools import partial

from tests.support import named

CD = "mcp__chrome-devtools__"
NAMES = ["new_page", "navigate_page", "take_snapshot", "click", "list_pages", "select_page", "close_page",
         "lighthouse_audit"]
# the specs the MCP adapter makes for two browser servers' tools (and paicli's browser_connect, in named.TABLE)
SPECS = {**named.mcp_specs("chrome-devtools", *NAMES), **named.mcp_specs("playwright", "browser_tabs", "browser_pdf_save")}
authorize, expose = partial(named.authorize, tools=SPECS), partial(named.expose, tools=SPECS)
is_browser_tool, browser_decision = partial(named.is_browser_tool, tools=SPECS), partial(named.browser_decision, tools=SPECS)
TOOLS = [(CD + n, "") for n in NAMES] + [("browser_connect", ""), ("mcp__playwright__browser_pdf_save", ""),
                                          ("read_file", "")]
OPENED = BrowserState(context=True)


def shown(text: str, state: BrowserState = BrowserState()) -> set[str]:
    return {n.removeprefix(CD) for n in expose(classify(text), TOOLS, browser=state)} - {"read_file"}


def test_browser_tools_are_known_by_their_facts_not_their_names():
    assert is_browser_tool(CD + "click") and is_browser_tool("browser_connect")
    assert not is_browser_tool("mcp__playwright__unregistered") and not is_browser_tool("mcp__docs__click")
    assert mcp_facts("docs", "click") is None
    assert action_of("mcp__playwright__browser_navigate") == "navigate" and action_of("browser_connect") == "connect"


@pytest.mark.parametrize("text, intent", [
    ("用浏览器点击登录按钮", INTERACT), ("看看当前页面上写了什么", READ), ("刷新一下", READ), ("用浏览器", READ),
    ("修一下浏览器模块的测试", NONE), ("读一下 README", NONE), ("打开 https://a.io 看看标题", NONE),
])
def test_intent_from_the_users_words(text, intent):
    assert browser_turn(text).intent == intent


def test_flags_from_the_users_words():
    assert browser_turn("看看当前标签页").existing_context
    assert browser_turn("列出浏览器的标签页").tab_management
    assert browser_turn("连接我的 Chrome").connect_requested and browser_turn("断开浏览器").disconnect_requested
    assert browser_turn("浏览器现在什么状态").status_requested


def test_a_grounded_url_opens_a_page_and_only_then_reads_are_offered():
    text = "打开 https://a.io 看看标题"
    assert shown(text) == {"new_page", "navigate_page", "lighthouse_audit"} - {"lighthouse_audit"} | {
        "mcp__playwright__browser_pdf_save"}  # another server's unknown tool: an ordinary MCP tool
    assert shown(text, OPENED) == {"new_page", "navigate_page", "take_snapshot", "mcp__playwright__browser_pdf_save"}
    assert "click" not in shown(text, OPENED)  # intent NONE: no interaction, page or not


def test_interaction_needs_interact_intent_and_a_page():
    assert "click" not in shown("用浏览器点击提交")
    assert "click" in shown("用浏览器点击提交", OPENED)
    assert {"list_pages", "select_page"} <= shown("列出浏览器的标签页", OPENED)
    assert "list_pages" not in shown("用浏览器看看", OPENED)


def test_connect_when_asked_or_when_a_page_asks_for_a_login():
    assert "browser_connect" in shown("连接我的 Chrome")
    assert "browser_connect" not in shown("打开 https://a.io 看看")
    assert "browser_connect" in shown("打开 https://a.io 看看", BrowserState(context=True, auth_required=True))
    shared = BrowserState(view=BrowserView(shared=True))
    assert "browser_connect" not in shown("连接我的 Chrome", shared)


def test_no_web_hides_every_browser_tool():
    assert shown("不要联网，打开 https://a.io", OPENED) == set()


def test_observe_reads_only_successes_and_finds_a_login_wall():
    state = rules.observe(BrowserState(), CD + "new_page", {"url": "x"}, True, "## Pages\n1: a (x) [selected]")
    assert state.context
    assert not rules.observe(BrowserState(), CD + "new_page", {}, False, "MCP 工具返回错误").context
    assert not rules.observe(BrowserState(), CD + "new_page", {}, True, "🛡️ 工具调用已拒绝").context
    walled = rules.observe(state, CD + "take_snapshot", {}, True, 'uid=1_1 heading "请登录后继续" level="1"')
    assert walled.auth_required
    assert not rules.observe(walled, "browser_connect", {}, True, "✅ 已连接").auth_required


def decide(text, name, args, state=OPENED):
    turn = classify(text)
    advertised = expose(turn, TOOLS + [("mcp__playwright__browser_tabs", "")], browser=state)
    return authorize(turn, name, args, advertised, browser=state)


def test_history_navigation_needs_a_page_in_this_branch():
    # "后退" is about the page already open (a history request): rule 4 lets it through
    assert decide("后退", CD + "navigate_page", {"type": "back", "pageId": 1}, BrowserState()) is None
    assert decide("用浏览器看看", CD + "navigate_page", {"type": "back", "pageId": 1}, BrowserState()).text.endswith(
        "当前执行分支尚未建立可操作的浏览器页面上下文。")


@pytest.mark.parametrize("args, message", [
    ({"action": "dance"}, "浏览器标签页操作缺少可验证的 action。"),
    ({"action": "new", "url": "https://a.io"}, "当前顶层用户原文只授权读取浏览器，未授权新建或关闭标签页。"),
])
def test_tab_actions_are_checked(args, message):
    assert decide("看看浏览器的标签页", "mcp__playwright__browser_tabs", args).text.endswith(message)


def test_a_new_tab_needs_a_url():
    denied = decide("用浏览器新建标签页", "mcp__playwright__browser_tabs", {"action": "new"})
    assert denied.text == "🛡️ 工具调用已拒绝 [UNGROUNDED_URL]: 新建浏览器标签页没有可信 URL 来源。"


def test_navigation_urls_must_be_grounded():
    assert decide("打开 https://a.io", CD + "new_page", {"url": "https://b.io"}).reason == "UNGROUNDED_URL"
    assert decide("打开 https://a.io", CD + "new_page", {"url": "https://a.io/"}) is None


SHARED = BrowserView(shared=True, pages=(Page("1", "https://mail.example.com/inbox", "收件箱"),
                                        Page("2", "https://a.io", "A", owned=True),
                                        Page("3", "https://bank.example.cn/", "网上银行", owned=True),
                                        Page("4", "https://news.example.com/", "新闻")),
                     selected="2", sensitive=SensitivePages())


def test_shared_mode_the_users_tabs_are_read_only_unless_the_user_says_otherwise():
    turn = browser_turn("用浏览器点击提交")
    assert "用户自己的标签页" in browser_decision(turn, SHARED, CD + "click", {"pageId": 4, "uid": "x"}).text
    assert browser_decision(turn, SHARED, CD + "click", {"pageId": 2, "uid": "x"}) is None
    said_otherwise = browser_turn("点击当前标签页上的提交按钮")  # about the open page, and an interaction
    assert browser_decision(said_otherwise, SHARED, CD + "click", {"pageId": 4, "uid": "x"}) is None
    assert "用户自己的标签页" in browser_decision(said_otherwise, SHARED, CD + "navigate_page",
                                                 {"pageId": 4, "url": "https://a.io"}).text
    closing = browser_decision(turn, SHARED, CD + "close_page", {"pageId": 4})
    assert "拒绝关闭非 paicli 创建的标签页" in closing.text
    assert browser_decision(turn, BrowserView(pages=SHARED.pages), CD + "click", {"pageId": 1}) is None  # isolated


def test_sensitive_pages_are_read_only_and_show_only_after_a_yes():
    turn = browser_turn("点击当前标签页上的提交按钮")  # about an open page, and an interaction: the user's pages too
    assert isinstance(browser_decision(turn, SHARED, CD + "click", {"pageId": 3}), Deny)
    assert "敏感页面" in browser_decision(turn, SHARED, CD + "click", {"pageId": 3}).text
    shot = browser_decision(turn, SHARED, CD + "take_snapshot", {"pageId": 1})
    assert isinstance(shot, Ask) and "敏感页面" in shot.notice and shot.danger.startswith("🔴")
    assert browser_decision(turn, SHARED, CD + "take_snapshot", {"pageId": 2}) is None


def test_connect_asks_every_time_and_names_why():
    asked = browser_decision(browser_turn("连接我的 Chrome"), BrowserView(), "browser_connect", {})
    assert isinstance(asked, Ask) and asked.notice and "y" in asked.notice


@pytest.mark.parametrize("url, title, sensitive", [
    ("https://www.paypal.com/checkout", "", True), ("https://github.com/settings/keys", "", True),
    ("https://mail.qq.com/", "", True), ("https://example.com/admin/users", "", True),
    ("https://example.com/", "网上银行 登录", True), ("https://example.com/docs", "文档", False),
])
def test_sensitive_pages_by_url_or_title(url, title, sensitive):
    assert (SensitivePages().match(url, title) is not None) == sensitive


def test_user_patterns_add_to_the_defaults(tmp_path):
    (tmp_path / "p.txt").write_text("# mine\n*://intranet.corp/*\n", encoding="utf-8")
    assert SensitivePages(tmp_path / "p.txt").match("https://intranet.corp/x")
    assert SensitivePages(tmp_path / "missing.txt").match("https://intranet.corp/x") is None


@pytest.mark.parametrize("name, args, line", [
    (CD + "new_page", {"url": "http://127.0.0.1:8/a"}, "🌐 打开 http://127.0.0.1:8/a"),
    (CD + "navigate_page", {"type": "back", "pageId": 2}, "🌐 后退（页面 2）"),
    (CD + "click", {"uid": "1_3", "pageId": 2}, "🖱 点击 1_3（页面 2）"),
    (CD + "take_snapshot", {"pageId": 2}, "📄 读取页面（页面 2）"),
    ("browser_connect", {}, "🔗 连接你的 Chrome"),
])
def test_tool_lines_show_the_action_and_the_page(name, args, line):
    assert browser_line(name, args) == line


def test_switching_the_browser_forgets_approve_all_of_its_server():
    from paicli.nodes.execute_tools import CallResult, Step, after_browser_switch
    from paicli.tools.browser.facts import DISCONNECT
    from paicli.tools.call import Call
    from paicli.tools.facts import DEFAULT
    from paicli.tools.policy.decision import Allow

    approved = ["mcp__chrome-devtools__new_page", "write_file"]
    disconnect = Call("c1", "browser_disconnect", {}, None, DISCONNECT)
    done = Step(disconnect, Allow({}), CallResult("✅ 已断开", ok=True, decided=False))
    assert after_browser_switch(approved, [done]) == ["write_file"]
    failed = Step(disconnect, Allow({}), CallResult("❌ 断开失败", ok=False, decided=False))
    assert after_browser_switch(approved, [failed]) is None
    other = Step(Call("c2", "read_file", {}, None, DEFAULT), Allow({}), CallResult("x", ok=True, decided=False))
    assert after_browser_switch(approved, [other]) is None
