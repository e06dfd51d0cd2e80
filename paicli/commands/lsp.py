"""``/lsp`` (issue 38): the session's language servers (language, program, root, state and why it
failed), ``restart <language>`` (a failed one too: failures are never retried by themselves),
``off <language>`` and ``on <language>`` for the rest of the session.

``app.session.deps.lsp`` is a ``paicli.tools.lsp.manager.LanguageServers`` (None with ``PAICLI_LSP=off``).
A language is named by its key (``python``, ``typescript``, ``go``, ``rust``, ``c``, ``java``) or
by its server's program (``basedpyright``).
"""

from __future__ import annotations

from typing import Any

USAGE = "❌ 用法: /lsp [restart|off|on <语言>]（语言: python、typescript、go、rust、c、java）"
STATE_LABELS = {"starting": "启动中", "ready": "就绪", "failed": "失败", "stopped": "已停止", "off": "已关闭",
                "missing": "未安装", "idle": "可用（编辑该语言的文件时启动）"}
VERBS = ("restart", "off", "on")


async def lsp(app: Any, payload: str, say: Any) -> None:
    servers = app.session.deps.lsp
    if servers is None:
        say("🩺 语言服务器已关闭（PAICLI_LSP=off）")
        return
    verb, _, name = payload.partition(" ")
    verb, name = verb.lower(), name.strip().lower()
    if not verb:
        _list(servers, say)
        return
    key = _language(servers, name)
    if verb not in VERBS or key is None:
        say.fail(USAGE if verb not in VERBS or not name else f"❌ 未知的语言: {name}（{USAGE[4:]}）")
        return
    if verb == "off":
        await servers.turn_off(key)
        say(f"⏹️ 本会话不再为 {_name(key)} 启动语言服务器（/lsp on {key} 恢复）")
        return
    stopped = await servers.restart(key)
    said = "已停止正在运行的服务器，" if stopped else ""
    say(f"🔄 {_name(key)}: {said}下次编辑该语言的文件时重新启动")


def _list(servers: Any, say: Any) -> None:
    say(f"🩺 语言服务器（等待诊断最多 {servers.options.wait:g} 秒，空闲 {servers.options.idle:g} 秒后停止）：")
    for row in servers.status():
        where = f"  {row.root}" if row.root else ""
        pid = f"  pid {row.pid}" if row.pid and row.state in ("starting", "ready") else ""
        why = f"：{row.reason}" if row.reason else ""
        say(f"   {row.language:<22} {row.server or '—':<16} {STATE_LABELS.get(row.state, row.state)}{why}{where}{pid}")


def _language(servers: Any, name: str) -> str | None:
    from paicli.tools.lsp.languages import BY_KEY

    if name in BY_KEY:
        return name
    return next((row.key for row in servers.status() if row.server and row.server.lower() == name), None)


def _name(key: str) -> str:
    from paicli.tools.lsp.languages import BY_KEY

    return BY_KEY[key].name
