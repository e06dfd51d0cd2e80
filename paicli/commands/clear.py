"""``/clear`` and bare ``clear`` (reference h.3; issue 41).

``/clear`` empties the conversation's view in the same session: the ledger keeps its lines, but
no command brings that conversation back (``/resume`` continues the session as it is now, empty).
So a bare ``clear``, which a shell habit types, asks first at the REPL; ``/clear`` and
``paicli -p clear`` (typed on purpose, nobody to ask) clear at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output

CONFIRM = "清空当前对话？清空后这段对话无法再用 /resume 找回（长期记忆不受影响）。输入 y 确认，其他输入取消："
KEPT = "已取消，对话保持不变（清空请输入 /clear）。"
CLEARED = "🗑️ 当前对话历史已清空，长期记忆保持不变"


async def clear(app: App, payload: str, say: Output) -> None:
    if say.word == "clear" and say.read_line is not None:
        answer = await say.read_line(CONFIRM)
        if (answer or "").strip().lower() not in ("y", "yes"):
            say(KEPT)
            return
    await app.session.clear()
    say(CLEARED)
