"""paicli's own browser tools (reference t): ``browser_status`` and, when ``PAICLI_BROWSER=shared``,
``browser_connect`` / ``browser_disconnect``, which switch the chrome-devtools server between
isolated and shared mode. None takes an argument. Their facts (``paicli.tools.browser.facts``) make
them browser tools for the exposure rules (o.4): status when asked or a page is open, connect
when asked or a page wants a login, disconnect when asked or shared; connect asks the person
every time.
"""

from __future__ import annotations

from typing import Any

from paicli.tools.base import ToolContext, ToolSpec, ToolText, failed
from paicli.tools.browser import facts
from paicli.tools.browser.session import BrowserSession, ConnectError

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "required": []}


def browser_specs(session: BrowserSession) -> dict[str, ToolSpec]:
    async def status(_args: dict[str, Any], _ctx: ToolContext) -> ToolText:
        return ToolText("\n".join(session.status_lines()))

    async def connect(_args: dict[str, Any], _ctx: ToolContext) -> ToolText:
        try:
            return ToolText(await session.connect())
        except ConnectError as exc:
            return failed(f"❌ 连接 Chrome 失败: {exc}")

    async def disconnect(_args: dict[str, Any], _ctx: ToolContext) -> ToolText:
        try:
            return ToolText(await session.disconnect())
        except ConnectError as exc:
            return failed(f"❌ 断开失败: {exc}")

    specs = [ToolSpec("browser_status", "查看浏览器当前模式（isolated 隔离 / shared 连接用户的 Chrome）和已打开的页面。",
                      NO_ARGS, status, is_async=True, facts=facts.STATUS)]
    if session.options.shared_allowed:
        specs += [
            ToolSpec("browser_connect", "把浏览器工具切换到用户自己正在运行的 Chrome（shared 模式，复用登录态）。"
                     "只在页面要求登录、或用户明确要求使用其 Chrome 时调用；每次都需要用户在终端输入 y 确认。",
                     NO_ARGS, connect, is_async=True, facts=facts.CONNECT),
            ToolSpec("browser_disconnect", "断开用户的 Chrome，浏览器回到隔离模式（无头浏览器、临时配置目录）。",
                     NO_ARGS, disconnect, is_async=True, facts=facts.DISCONNECT),
        ]
    return {spec.name: spec for spec in specs}
