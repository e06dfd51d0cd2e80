"""``/browser [status|connect [port]|disconnect|tabs]`` (reference u.1, paicli issue 40).

``app.browser`` is the session's ``paicli.tools.browser.session.BrowserSession``, or None when the
browser is off or cannot run here: then ``/browser`` prints the one line saying why
(``Settings.browser.problem``) and nothing else. ``connect`` hands the agent the user's own
Chrome only after the person types ``y`` at the prompt, so ``paicli -p "/browser connect"``
(nobody to ask) refuses.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

USAGE = "❌ 用法: /browser [status|connect [端口]|disconnect|tabs]"
OFF = ("🌐 浏览器未开启（PAICLI_BROWSER=off）：设置 PAICLI_BROWSER=isolated 使用无头浏览器，"
       "shared 还允许连接你自己的 Chrome")
UNAVAILABLE = "🌐 浏览器不可用（PAICLI_BROWSER={mode}）：{problem}"
CONFIRM = "将把浏览器工具连接到你正在运行的 Chrome，Agent 可以读取其中的标签页和登录态。确认连接？输入 y 确认："
READY_WAIT = 40.0  # seconds the browser server has to start for a command
NOBODY = "❌ /browser connect 需要在终端中输入 y 确认，-p 模式无法连接你的 Chrome"


async def browser(app: Any, payload: str, say: Any) -> None:
    read_line = say.read_line  # None under -p: nobody can confirm a connection
    verb, _, rest = payload.partition(" ")
    verb, rest = verb.lower(), rest.strip()
    options = app.settings.browser
    session = app.browser
    if session is None:
        say(OFF if options.mode == "off" else UNAVAILABLE.format(mode=options.mode, problem=options.problem))
        return
    if verb in ("", "status"):
        say("🌐 浏览器状态：")
        for line in session.status_lines():
            say(f"   {line}")
    elif verb == "connect":
        await _connect(rest, app, session, say, read_line)
    elif verb == "disconnect":
        from paicli.tools.browser.session import ConnectError

        try:
            say(await session.disconnect())
        except ConnectError as exc:
            say.fail(f"❌ 断开失败: {exc}")
        else:
            await _forget_browser_approvals(app)
    elif verb == "tabs":
        await _tabs(app, session, say)
    else:
        say.fail(USAGE)


async def _connect(rest: str, app: Any, session: Any, say: Any, read_line: Any) -> None:
    from paicli.tools.browser.session import ConnectError

    if rest and not rest.isdigit():
        say.fail(f"❌ 端口必须是数字：{rest}")
        return
    if not session.options.shared_allowed:
        say.fail(f"❌ PAICLI_BROWSER={session.options.mode}：不允许连接你自己的 Chrome（设置 PAICLI_BROWSER=shared 后可用）")
        return
    if read_line is None:
        say.fail(NOBODY)
        return
    answer = (await read_line(CONFIRM) or "").strip().lower()
    if answer not in ("y", "yes"):
        say("已取消，浏览器保持隔离模式。")
        return
    await _started(app)
    try:
        say(await session.connect(int(rest) if rest else None))
    except ConnectError as exc:
        say.fail(f"❌ 连接 Chrome 失败: {exc}")
        return
    await _forget_browser_approvals(app)


async def _tabs(app: Any, session: Any, say: Any) -> None:
    await _started(app)
    result = await app.mcp.call("chrome-devtools", "list_pages", {})
    text = session.record("mcp__chrome-devtools__list_pages", {}, getattr(result, "ok", True), str(result))
    say("🗂 浏览器标签页：")
    for line in text.splitlines():
        if line.strip() and not line.startswith("## "):
            say(f"   {line}")


async def _started(app: Any) -> None:
    """``paicli -p "/browser …"``: the servers start with the first turn; start them here."""
    servers = app.mcp
    if not any(s.task is not None for s in servers.servers.values()):
        servers.start()
    state = servers.servers.get("chrome-devtools")
    deadline = time.monotonic() + READY_WAIT
    while state is not None and state.status == "starting" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


async def _forget_browser_approvals(app: Any) -> None:
    """reference v.1: switching the browser mode forgets "approve all" of the chrome-devtools server."""
    if app.started:
        await app.session.forget_approvals(lambda key: not key.startswith("mcp__chrome-devtools__"))


def policy_line(app: Any) -> str:
    """``/policy``'s line on the browser (issue 40)."""
    options, session = app.settings.browser, app.browser
    if options.mode == "off":
        return "浏览器: off（PAICLI_BROWSER=off，没有浏览器工具）"
    if session is None:
        return f"浏览器: {options.mode}（不可用：{options.problem}）"
    now = f"当前已连接你的 Chrome（{session.endpoint}）" if session.shared else "当前为隔离模式（无头浏览器，临时配置目录）"
    allowed = "允许在你输入 y 后连接你的 Chrome" if options.shared_allowed else "不允许连接你的 Chrome"
    return (f"浏览器: {options.mode}，{now}，{allowed}；共享模式下你的标签页和敏感页面对 Agent 只读，"
            "敏感页面的截图与快照需你确认；浏览器并行使用时按租约轮流")
