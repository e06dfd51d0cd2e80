"""How a browser call reads in the turn's tool lines (paicli issue 40, reference u.3): the action
and the page, one line a call: ``🌐 打开 http://…``, ``🖱 点击 1_3（页面 2）``. The arguments are the
model's: the caller's printer makes them visible-only (``paicli.ui.terminal``)."""

from __future__ import annotations

from typing import Any

from paicli.tools.browser.names import action_of

MAX = 80
_LINES = {
    "navigate_back": "🌐 后退", "back": "🌐 后退", "forward": "🌐 前进", "reload": "🌐 刷新",
    "list_pages": "🗂 列出标签页", "tabs": "🗂 标签页 {action}", "select_page": "🗂 切换到标签页",
    "close_page": "✖ 关闭标签页", "close": "✖ 关闭标签页",
    "take_snapshot": "📄 读取页面", "snapshot": "📄 读取页面", "take_screenshot": "📸 截图", "screenshot": "📸 截图",
    "wait_for": "⏳ 等待页面出现 {text}", "click": "🖱 点击 {target}", "click_at": "🖱 点击 {target}",
    "hover": "🖱 悬停 {target}", "drag": "🖱 拖动 {target}", "fill": "⌨️ 填写 {target}", "fill_form": "⌨️ 填写表单",
    "type": "⌨️ 输入 {text}", "type_text": "⌨️ 输入 {text}", "press_key": "⌨️ 按键 {key}",
    "select_option": "⌨️ 选择 {target}", "upload_file": "📎 上传文件", "file_upload": "📎 上传文件",
    "handle_dialog": "💬 处理对话框 {action}", "evaluate_script": "⚙️ 在页面中执行脚本", "evaluate": "⚙️ 在页面中执行脚本",
    "list_console_messages": "📋 控制台消息", "list_network_requests": "📋 网络请求",
    "connect": "🔗 连接你的 Chrome", "disconnect": "⛓ 断开你的 Chrome", "status": "🌐 浏览器状态",
}


def browser_line(name: str, args: Any) -> str:
    args = args if isinstance(args, dict) else {}
    action = action_of(name)
    if action in ("new_page", "open", "navigate") or (action == "navigate_page" and _text(args, "url")):
        line = f"🌐 打开 {_text(args, 'url')}"
    elif action == "navigate_page":
        line = _LINES.get(_text(args, "type").lower(), "🌐 导航")
    else:
        template = _LINES.get(action, f"🌐 {action}")
        line = template.format(target=_text(args, "uid", "ref", "element", "selector"), text=_text(args, "text", "value"),
                               key=_text(args, "key"), action=_text(args, "action"))
    page = args.get("pageId")
    line = line.rstrip() + (f"（页面 {page}）" if page not in (None, "") and action not in ("new_page", "open") else "")
    return line if len(line) <= MAX else line[:MAX - 3] + "..."


def _text(args: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if value not in (None, ""):
            return " ".join(str(value).split()) if not isinstance(value, list) else " ".join(map(str, value))
    return ""
