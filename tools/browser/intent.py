"""What the user's submitted text asks of the browser (reference o.3): the intent NONE / READ /
INTERACT and the flags the exposure rules read (o.4 rule 4).

Read once per turn from the text the user typed (``paicli.tools.policy.classify``), never from a
page, a tool result or a planner's task. The patterns are PaiCLI's TurnToolPolicy's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NONE, READ, INTERACT = "NONE", "READ", "INTERACT"

# reference o.3: the browser patterns, as PaiCLI writes them.
BROWSER_TARGET = re.compile(r"(?i)(?:浏览器|当前页面|当前网页|当前标签页|已打开的页面|标签页|页签|chrome|browser|\btab\b)")
_TARGET_WORDS = r"(?:浏览器|当前页面|当前网页|当前标签页|标签页|页签|chrome|browser|\btab\b)"
BROWSER_READ_REQUEST = re.compile(
    r"(?i)^(?:先|再|然后|接着)?(?:用|使用)?(?:浏览器|chrome|browser).{0,20}"
    r"(?:打开|访问|浏览|查看|看看|读取|检查|分析|搜索|截图|列出|页面|标签页)"
    r"|^(?:先|再|然后|接着)?(?:打开|访问|浏览|查看|看看|读取|检查|截图|搜索|列出).{0,20}" + _TARGET_WORDS)
BROWSER_INTERACT_REQUEST = re.compile(
    r"(?i)^(?:先|再|然后|接着)?(?:用|使用)?(?:浏览器|chrome|browser).{0,20}"
    r"(?:点击|填写|填入|提交|上传|操作|登录|关闭|切换|输入|新建|创建)"
    r"|^(?:先|再|然后|接着)?(?:点击|填写|填入|提交|上传|操作|登录|关闭|切换|输入|新建|创建).{0,20}" + _TARGET_WORDS)
BROWSER_HISTORY_REQUEST = re.compile(
    r"(?i)(?:浏览器|chrome|browser)?\s*(?:后退|前进|刷新|重新加载|返回上一页|回到上一页)"
    r"|(?:go\s+back|go\s+forward|reload|refresh)(?:\s+(?:the\s+)?(?:browser|page|tab))?")
BROWSER_TAB_REQUEST = re.compile(
    r"(?i)(?:列出|查看|看看|切换|选择|新建|创建|关闭).{0,16}(?:浏览器)?(?:标签页|页签|tab)"
    r"|(?:标签页|页签|tab).{0,16}(?:列表|切换|选择|新建|创建|关闭)")
BROWSER_CODE_REFERENCE = re.compile(
    r"(?i)(?:browser|chrome|浏览器).{0,20}(?:模块|代码|源码|类|测试|MCP|接口|实现)"
    r"|(?:模块|代码|源码|类|测试|MCP|接口|实现).{0,20}(?:browser|chrome|浏览器)")
EXPLICIT_BROWSER_USE = re.compile(r"(?i)(?:用|使用|通过)\s*(?:浏览器|chrome|browser)")
EXISTING_BROWSER_CONTEXT = re.compile(
    r"(?i)(?:当前|正在|已打开|现有|活动的)(?:的)?(?:浏览器)?(?:页面|网页|标签页|页签)"
    r"|(?:current|active|already[ -]open|existing)\s+(?:page|tab|browser)")
BROWSER_CONNECT_REQUEST = re.compile(
    r"(?i)(?:连接|接入|复用|切换到).{0,16}(?:浏览器|chrome|shared)|(?:browser\s+connect|connect.{0,16}(?:browser|chrome))")
BROWSER_DISCONNECT_REQUEST = re.compile(
    r"(?i)(?:断开|退出|切回).{0,16}(?:浏览器|chrome|isolated)|(?:browser\s+disconnect|disconnect.{0,16}(?:browser|chrome))")
BROWSER_STATUS_REQUEST = re.compile(
    r"(?i)(?:浏览器|chrome|browser).{0,12}(?:状态|模式|status)|(?:状态|模式|status).{0,12}(?:浏览器|chrome|browser)")

_CLAUSES = re.compile(r"[，,；;。\n]+")
_LABEL = re.compile(r"^(?:补充要求|用户补充|追加要求|要求)[：:]\s*")
_REQUEST = re.compile(r"^(?:请你|请帮忙|请|帮我|帮忙|麻烦|能否|能不能|可以帮我|我想让你|我需要你|给我)")
_LEAD = re.compile(r"^(?:先|再|然后|接着|顺便|同时|并且?)+")


@dataclass(frozen=True)
class BrowserTurn:
    """The browser part of a turn's classification (o.3)."""

    intent: str = NONE  # NONE | READ | INTERACT
    existing_context: bool = False  # the text is about a page or tab already open (or history)
    tab_management: bool = False  # list, switch, open or close tabs
    connect_requested: bool = False
    disconnect_requested: bool = False
    status_requested: bool = False


def browser_turn(text: str) -> BrowserTurn:
    text = (text or "").strip()
    history = bool(BROWSER_HISTORY_REQUEST.search(text))
    return BrowserTurn(
        intent=browser_intent(text),
        existing_context=bool(EXISTING_BROWSER_CONTEXT.search(text)) or history,
        tab_management=bool(BROWSER_TAB_REQUEST.search(text)),
        connect_requested=bool(BROWSER_CONNECT_REQUEST.search(text)),
        disconnect_requested=bool(BROWSER_DISCONNECT_REQUEST.search(text)),
        status_requested=bool(BROWSER_STATUS_REQUEST.search(text)),
    )


def browser_intent(text: str) -> str:
    """History requests read; otherwise nothing without a browser target; a code reference
    (浏览器模块的测试) is not a browser request unless the text says to use the browser; then the
    first clause that asks to interact or to read decides."""
    if not text:
        return NONE
    if BROWSER_HISTORY_REQUEST.search(text):
        return READ
    if not BROWSER_TARGET.search(text):
        return NONE
    explicit = bool(EXPLICIT_BROWSER_USE.search(text))
    if not explicit and BROWSER_CODE_REFERENCE.search(text):
        return NONE
    for clause in _CLAUSES.split(text):
        body = _lead_stripped(clause)
        if BROWSER_INTERACT_REQUEST.search(body):
            return INTERACT
        if BROWSER_READ_REQUEST.search(body):
            return READ
    return READ if explicit else NONE


def _lead_stripped(clause: str) -> str:
    body = _LABEL.sub("", clause.strip(), count=1)
    body = _REQUEST.sub("", body, count=1).lstrip()
    return _LEAD.sub("", body, count=1).lstrip()
