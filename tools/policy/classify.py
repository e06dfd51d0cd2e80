"""Turn-level classification of the user's submitted text (reference o.3).

``classify`` runs once per top-level turn on the text the user typed, never on expanded
``@path`` / MCP bodies or planner-written tasks (o.2). The result is a frozen ``TurnClass``
that the exposure filter and ``authorize`` (tools/policy/turn.py) read.

The browser part (intent NONE / READ / INTERACT and the flags of o.3: existing context, tab
management, connect / disconnect / status requests) is ``paicli.tools.browser.intent``'s; the
exposure rules that read it (o.4 rule 4) are ``paicli.tools.browser.rules``'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paicli.tools.browser.intent import INTERACT, NONE, READ, BrowserTurn, browser_turn  # noqa: F401 (re-exported)
from paicli.tools.facts import ToolFacts
from paicli.tools.urls import extract_urls

# reference o.3: EXPLICIT_NO_WEB, as written.
EXPLICIT_NO_WEB = re.compile(
    r"(?i)(?:请\s*)?(?:不要|不用|别|禁止|无需|请勿|不许|不需要|不必)(?:\s*再)?(?:\s*(?:使用|调用|用))?\s*"
    r"(?:联网|上网|搜索|搜|查找|访问网页|打开网页|浏览网页|浏览器)"
    r"|(?:请\s*)?(?:仅|只)(?:使用|用|根据|基于)?\s*(?:我(?:所)?提供的|本地|已有|现有|提供的)(?:资料|内容|文本|文件|上下文)"
    r"|(?:please\s+)?(?:do\s+not|don't)\s+(?:browse|search|use\s+(?:the\s+)?(?:web|browser)|open\s+the\s+browser)"
    r"|without\s+(?:browsing|web\s+search)|offline\s+only|no\s+web"
)
# reference o.3: REQUEST_PREFIX, as written.
_REQUEST_WORDS = ("请", "请你", "请帮忙", "帮我", "帮忙", "麻烦", "能否", "能不能", "可以帮我", "我想让你", "我需要你", "给我")
REQUEST_PREFIX = re.compile("^(?:" + "|".join(_REQUEST_WORDS) + ")")
# Stripping takes the longest word, so "请你搜索" loses "请你", not just "请".
_STRIP_REQUEST = re.compile("^(?:" + "|".join(sorted(_REQUEST_WORDS, key=len, reverse=True)) + ")")
# reference o.3: the three headline shapes.
HEADLINE_SUFFIX = re.compile(r"(?i)[（(【\[].{0,12}(?:附|含).{0,24}(?:面试题|源码|答案|资料|清单|PDF|福利).*[）)】\]]$")
HEADLINE_TITLE = re.compile(r"^[《【].+[》】]$|^#{1,6}\s+.+$")
HEADLINE_QUESTION = re.compile(r"^.{2,48}[：:].{4,180}[？?]$")
HEADLINE_QUESTION_MAX = 220  # reference o.3

# reference o.3, looksLikeLocalTextTransform: how a clause is cut and cleaned.
_CLAUSE_SPLIT = re.compile(r"[，,；;。\n]")
_SUPPLEMENT_LABEL = re.compile(r"^(?:补充要求|用户补充|追加要求|要求)：")
_CONNECTIVE = re.compile(r"^(?:先|再|然后|接着|顺便|同时|并且?)")
# The reference names CHINESE_WEB_ACTION without spelling it out; this covers its intent:
# a clause that starts by asking to search / look something up, or to open a page or link.
CHINESE_WEB_ACTION = re.compile(
    r"^(?:搜索|搜|查一下|查查|查找|查询|检索)(?:一下|下|这个|这篇|该|标题|原文|资料|最新|关于|关键词|\s|：|:|$)"
    r"|^(?:打开|访问|浏览|阅读)(?:一下)?(?:这个|这篇|该|上面|上述|链接|网页|页面|网站|文章|https?://)"
)
ENGLISH_WEB_ACTION = re.compile(r"(?i)^(?:search(?:\s+the\s+web)?|browse|fetch|look\s+up|find\s+online)\b")
GO_ONLINE = re.compile(r"^(?:先|再|然后|接着)?(?:联网|上网)")
TEXT_OBJECT = re.compile(r"标题|这段|文本|文案|句子|headline|title|this text")
TRANSFORM_VERB = re.compile(r"polish|rewrite|edit|translate|remove|delete|rate|润色|改写|翻译|删除|去掉|替换|打分|评价|点评")

# reference o.5: what an execute_command ``command`` / ``cmd`` reaches, as written.
NETWORK_COMMAND = re.compile(
    r"(?i)(?:^|[;&|\s])(?:curl|wget|httpie|lynx|ssh|scp|sftp|telnet|nc)(?:$|\s)"
    r"|(?:^|[;&|\s])git\s+(?:clone|fetch|pull)(?:$|\s)"
    r"|(?:^|[;&|\s])gh\s+(?:api|repo\s+clone)(?:$|\s)"
    r"|(?:^|[;&|\s])(?:npm|pnpm|yarn|pip|pip3)\s+(?:install|add|i)(?:$|\s)"
    r"|https?://|ssh://|git@"
)
WEB_COMMAND = re.compile(r"(?i)(?:^|[;&|\s])(?:curl|wget|httpie|lynx)(?:$|\s)")

# reference o.1: ExplicitMemoryHints.
REMEMBER_WORDS = ("记一下", "记住", "记下来", "以后记得", "下次记得", "保存这个偏好", "保存到长期记忆")

# reference o.3: printed by ReAct when headline_only is true.
HEADLINE_NOTICE = "  ℹ 这句输入看起来是标题或摘录，本轮未开放联网工具；需要搜索或抓取时请说明要做什么"

@dataclass(frozen=True)
class TurnClass:
    explicit_no_web: bool = False
    headline_only: bool = False
    web_forbidden: bool = False  # explicit_no_web or headline_only or a local text transform
    grounded_urls: frozenset[str] = frozenset()  # normalised URLs of the submitted text
    explicit_memory_requested: bool = False
    browser: BrowserTurn = BrowserTurn()  # the browser intent and flags (paicli.tools.browser.intent)

    @property
    def browser_intent(self) -> str:  # NONE | READ | INTERACT
        return self.browser.intent


def classify(submitted: str, explicit_task: bool = False) -> TurnClass:
    """Classify one turn; ``explicit_task`` (trusted callers, o.2) skips only the headline check."""
    text = (submitted or "").strip()
    no_web = bool(EXPLICIT_NO_WEB.search(text))
    headline = not explicit_task and looks_like_headline(text)
    return TurnClass(
        explicit_no_web=no_web,
        headline_only=headline,
        web_forbidden=no_web or headline or looks_like_local_text_transform(text),
        grounded_urls=frozenset(extract_urls(text)),
        explicit_memory_requested=has_explicit_remember_intent(text),
        browser=browser_turn(text),
    )


def has_explicit_remember_intent(text: str | None) -> bool:
    return bool(text) and any(word in text for word in REMEMBER_WORDS)


def command_of(args: object, facts: ToolFacts) -> str:
    """The shell command of a call of a ``command``-guarded tool (``execute_command``: its
    ``command`` or ``cmd`` argument), else ``""``; ``facts``: the call's (``paicli.tools.call.Call``)."""
    if facts.guard != "command" or not isinstance(args, dict):
        return ""
    value = args.get("command") or args.get("cmd")
    return value if isinstance(value, str) else ""


def looks_like_headline(text: str) -> bool:
    # Dropping a no-web phrase can leave a dangling comma; trim separators with it.
    bare = EXPLICIT_NO_WEB.sub("", text).strip(" \t\r\n，,。；;、")
    if not bare or extract_urls(bare) or REQUEST_PREFIX.match(bare):
        return False
    if HEADLINE_SUFFIX.search(bare) or HEADLINE_TITLE.search(bare):
        return True
    return len(bare) <= HEADLINE_QUESTION_MAX and "\n" not in bare and bool(HEADLINE_QUESTION.search(bare))


def looks_like_local_text_transform(text: str) -> bool:
    lowered = text.lower()
    if any(is_web_request(clause) for clause in _CLAUSE_SPLIT.split(text)):
        return False
    return bool(TEXT_OBJECT.search(lowered)) and bool(TRANSFORM_VERB.search(lowered))


def is_web_request(clause: str) -> bool:
    """One clause, after its label, request prefix and connective are stripped, asks for the web."""
    bare = _SUPPLEMENT_LABEL.sub("", clause.strip(), count=1)
    bare = _STRIP_REQUEST.sub("", bare, count=1)
    bare = _CONNECTIVE.sub("", bare, count=1).strip()
    return bool(CHINESE_WEB_ACTION.search(bare) or ENGLISH_WEB_ACTION.search(bare) or GO_ONLINE.search(bare))
