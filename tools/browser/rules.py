"""The browser's exposure and authorisation rules (reference o.4 rule 4, o.5 rules 4–5, o.6), and
paicli's shared-mode rules (issue 40): agent-owned pages and sensitive pages.

Plain functions on plain data, for the turn policy (``paicli.tools.policy.turn``) and the decision of a
call (``paicli.nodes.core.policy``):

- ``BrowserView`` is the live browser as the session knows it (``paicli.tools.browser.session``): shared
  or not, the pages it has seen, which of them the agent opened.
- ``BrowserState`` adds what this branch of the turn established (o.6): a page was opened or
  selected (a browser context), a page read asked for a login (``browser_connect`` is offered).
  It is worked out again from the branch's own tool results (``observe``), so nothing is
  checkpointed for it; a Plan task or Team step has a branch of its own.
- ``visible`` is o.4 rule 4; ``refusal`` is o.5 rules 4 and 5; ``page_refusal`` and
  ``page_question`` are the shared-mode rules: a page the user had open is read-only unless the
  user's words are about it and ask to interact, a sensitive page is read-only whatever they say,
  and its screenshots and snapshots need the person's ``y``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from paicli.tools.browser.intent import INTERACT, NONE, BrowserTurn
from paicli.tools.browser.names import (
    CHROME_DEVTOOLS, CONTROL, CURRENT_PAGE_READS, INTERACTIONS, KNOWN, NAVIGATION, NEW_PAGE, SCREEN_READS, SESSION,
    TAB_ACTIONS, action_of, is_history_navigation,
)
from paicli.tools.browser.sensitive import Match, SensitivePages
from paicli.tools.mcp.names import server_of

# reference o.5 rules 4 and 5, verbatim.
MSG_NO_CONTEXT = "当前执行分支尚未建立可操作的浏览器页面上下文。"
MSG_TAB_ACTION = "浏览器标签页操作缺少可验证的 action。"
MSG_TAB_READ_ONLY = "当前顶层用户原文只授权读取浏览器，未授权新建或关闭标签页。"
MSG_TAB_NO_URL = "新建浏览器标签页没有可信 URL 来源。"
# Shared mode (the user's own Chrome): guard refusals, shown as ``🛡️ 策略拒绝: <reason>``.
NOT_OWNED = ("shared 浏览器模式下页面 {page} 不是 paicli 打开的，而是用户自己的标签页（只读）；"
             "请先用 new_page 打开目标 URL，不能导航或改写用户原有标签页")
NOT_OWNED_CLOSE = "shared 浏览器模式下拒绝关闭非 paicli 创建的标签页 {page}，请在 Chrome 中手动操作"
SENSITIVE_READ_ONLY = ("页面 {page} 是敏感页面（{rule}），对 Agent 只读：不能点击、填写、提交或执行脚本，"
                       "请用户在浏览器中亲自操作")
SENSITIVE_SHOW = "页面 {page} 是敏感页面（{rule}）：截图和页面快照只有在你输入 y 后才会发给模型，不能“全部放行”"
# reference o.6: a page read that says the page wants a login (PaiCLI's pattern, matched per line).
AUTH_REQUIRED = re.compile(
    r"(?i)(?:(?:当前|该|此)?页面.{0,40}(?:请|需要|必须|尚未|未)(?:登录|登陆)"
    r"|(?:请|需要|必须|尚未|未)(?:登录|登陆)(?:后)?(?:才能|以便)?(?:访问|继续)?"
    r"|(?:登录|登陆)(?:页面|页)|权限不足|无权访问|未经授权"
    r"|authentication required|unauthorized|forbidden|permission denied)")
# reference o.6: a result is a success only when it is not blank and starts with none of these.
FAILURE_PREFIXES = ("🛡️", "❌", "[HITL]", "工具执行失败", "工具执行超时", "未知工具", "搜索失败", "抓取失败")


@dataclass(frozen=True)
class Page:
    id: str
    url: str = ""
    title: str = ""
    owned: bool = False  # opened by the agent (in shared mode; every page is the agent's in isolated mode)


@dataclass(frozen=True)
class BrowserView:
    """The live browser (``paicli.tools.browser.session``), as one decision reads it."""

    shared: bool = False  # connected to the user's own Chrome
    pages: tuple[Page, ...] = ()
    selected: str | None = None
    sensitive: SensitivePages | None = field(default=None, compare=False)

    def page(self, page_id: str | None) -> Page | None:
        return next((p for p in self.pages if p.id == page_id), None) if page_id else None

    @property
    def owns_a_page(self) -> bool:
        return any(p.owned for p in self.pages)


@dataclass(frozen=True)
class BrowserState:
    view: BrowserView = BrowserView()
    context: bool = False  # a page was opened or selected in this branch of the turn (o.6)
    auth_required: bool = False  # a page read in this branch asked for a login (o.6)


def is_success(ok: bool, text: str) -> bool:
    body = (text or "").lstrip()
    return ok and bool(body) and not body.startswith(FAILURE_PREFIXES)


def observe(state: BrowserState, name: str, args: Any, ok: bool, text: str) -> BrowserState:
    """o.6: what one finished browser call established; failures establish nothing."""
    if not is_success(ok, text):
        return state
    action = action_of(name)
    if action in ("connect", "disconnect") and is_browser_control_success(text):
        return replace(state, context=False, auth_required=False)
    if action in NAVIGATION or action == "select_page" or (action == "tabs" and _tab_action(args) == "select"):
        state = replace(state, context=True)
    if action in CURRENT_PAGE_READS and any(AUTH_REQUIRED.search(line) for line in text.splitlines()):
        state = replace(state, auth_required=True)
    return state


def is_browser_control_success(text: str) -> bool:
    lowered = (text or "").lower()
    return not any(word in lowered for word in ("无法", "失败", "error", "failed"))


def visible(name: str, turn: BrowserTurn, state: BrowserState, grounded: bool) -> bool:
    """o.4 rule 4: whether a browser tool is advertised to the model for this call."""
    action, view = action_of(name), state.view
    shared = view.shared and _is_chrome(name)
    readable = state.context or turn.existing_context
    if shared:
        mutable = readable and (view.owns_a_page or user_pages_mutable(turn))
    else:
        mutable = readable
    if action == "status":
        return turn.status_requested or state.context or view.shared
    if action == "connect":
        return not view.shared and (turn.connect_requested or state.auth_required)
    if action == "disconnect":
        return turn.disconnect_requested or view.shared
    if action in NAVIGATION:
        if action in NEW_PAGE:
            return grounded
        if action == "navigate_back":
            return mutable
        return (grounded or mutable) and (not shared or view.owns_a_page or state.context)
    if not _known(name):
        return True  # another browser server's tool paicli knows nothing of: an ordinary MCP tool
    if turn.intent == NONE:
        return state.context and action in CURRENT_PAGE_READS
    if action in SESSION:
        return turn.existing_context or turn.tab_management
    if action in CURRENT_PAGE_READS:
        return readable
    return turn.intent == INTERACT and mutable and action in INTERACTIONS


def user_pages_mutable(turn: BrowserTurn) -> bool:
    """The user said otherwise: the text is about a page already open and asks to interact."""
    return turn.intent == INTERACT and turn.existing_context


def refusal(turn: BrowserTurn, state: BrowserState, name: str, args: Any, has_urls: bool) -> str | None:
    """o.5 rules 4 and 5: the message of the first that matches (all ``TOOL_NOT_ADVERTISED`` but
    a new tab without a URL, ``UNGROUNDED_URL``: see ``refusal_code``), or None."""
    if is_history_navigation(name, args) and not state.context and not turn.existing_context:
        return MSG_NO_CONTEXT
    if action_of(name) == "tabs":
        action = _tab_action(args)
        if action not in TAB_ACTIONS:
            return MSG_TAB_ACTION
        if action in ("new", "close") and turn.intent != INTERACT:
            return MSG_TAB_READ_ONLY
        if action == "new" and not has_urls:
            return MSG_TAB_NO_URL
    return None


def refusal_code(message: str) -> str:
    return "UNGROUNDED_URL" if message == MSG_TAB_NO_URL else "TOOL_NOT_ADVERTISED"


def page_refusal(turn: BrowserTurn, view: BrowserView, name: str, args: Any) -> str | None:
    """Shared mode: why this call may not touch its page (a guard refusal), or None."""
    if not view.shared or not _is_chrome(name):
        return None
    action, page_id = action_of(name), target_page(view, args)
    page = view.page(page_id)
    writes = action in INTERACTIONS or (action in NAVIGATION and action not in NEW_PAGE)
    if not writes or page_id is None:
        return None
    shown = _shown(page_id, page)
    match = _sensitive(view, page)
    if match is not None:
        return SENSITIVE_READ_ONLY.format(page=shown, rule=match.rule)
    if page is not None and page.owned:
        return None
    if action in ("close_page", "close"):
        return NOT_OWNED_CLOSE.format(page=shown)
    return None if user_pages_mutable(turn) and action != "navigate_page" else NOT_OWNED.format(page=shown)


def page_question(view: BrowserView, name: str, args: Any) -> str | None:
    """Shared mode: the notice of a screenshot or snapshot of a sensitive page (asked, every
    time), or None."""
    if not view.shared or not _is_chrome(name) or action_of(name) not in SCREEN_READS:
        return None
    page_id = target_page(view, args)
    page = view.page(page_id)
    match = _sensitive(view, page)
    return SENSITIVE_SHOW.format(page=_shown(page_id, page), rule=match.rule) if match is not None else None


def target_page(view: BrowserView, args: Any) -> str | None:
    """The page a call acts on: its ``pageId`` (chrome-devtools routes every page tool by it),
    else the selected page."""
    if isinstance(args, dict) and args.get("pageId") not in (None, ""):
        return str(args["pageId"])
    return view.selected


def _sensitive(view: BrowserView, page: Page | None) -> Match | None:
    if page is None or view.sensitive is None:
        return None
    return view.sensitive.match(page.url, page.title)


def _shown(page_id: str, page: Page | None) -> str:
    return f"{page_id}（{page.url}）" if page is not None and page.url else page_id


def _is_chrome(name: str) -> bool:
    """Shared mode concerns paicli's own browser server (and the browser_* tools)."""
    server = server_of(name)
    return server == CHROME_DEVTOOLS or (server is None and action_of(name) in CONTROL)


def _known(name: str) -> bool:
    """Whether the exposure rules know this tool: every tool of paicli's own browser server and
    the browser_* tools; another browser server's tools only when their action is a known one."""
    return server_of(name) in (None, CHROME_DEVTOOLS) or action_of(name) in KNOWN


def _tab_action(args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return ""
    value = args.get("action") if isinstance(args, dict) else None
    return value.strip().lower() if isinstance(value, str) else ""
