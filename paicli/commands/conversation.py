"""The commands about the conversation itself (reference u.1, u.2): ``/resume``, ``/compact`` and
``/context`` (``/model``, ``/clear``, ``/cancel`` and ``/continue`` have modules of their own:
``model``, ``clear``, ``mode``, ``continuing``). Each is a handler of its ``CommandSpec``
(``paicli.commands.table``): ``(app, payload, say)``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from paicli.commands.output import Output
from paicli.modes import DEFAULT_MODE

if TYPE_CHECKING:  # the App imports the commands lazily
    from paicli.app import App

# Why /compact failed, by paicli.memory.context.summary.Abort name (names, so the REPL starts without
# importing the compaction modules).
COMPACT_FAILURES = {
    "LLM_ERROR": "生成摘要时调用模型失败",
    "EMPTY_SUMMARY": "模型返回了空摘要",
    "BAD_PARTIAL": "分段摘要为空或过长",
    "NO_HEADINGS": "摘要缺少规定的四个小节（修复一次后仍不合格）",
    "NOT_SMALLER": "摘要没有让上下文变小",
}
RESUME_LIST_LIMIT = 20
UNFINISHED = "⏸️ 该会话有未完成的 {mode} 运行，输入 /continue 继续执行。"





async def compact(app: App, payload: str, say: Output) -> None:
    """reference u.2 /compact."""
    from paicli.memory.context.summary import SummaryError

    say("⏳ 压缩中，等一下下哦...")
    try:
        result = await app.session.compact_now()
    except SummaryError as exc:
        say.fail(f"❌ 手动压缩失败: {COMPACT_FAILURES.get(exc.reason.name, str(exc))}")
        return
    if result is None:
        say("📭 当前没有需要压缩的历史上下文")
    else:
        say(f"📦 已手动压缩历史上下文: {result.tokens_before:,} -> {result.tokens_after:,} tokens")


async def context(app: App, payload: str, say: Output) -> None:
    from paicli.app import sandbox_lines
    from paicli.ui.context_view import render_context

    for line in render_context(await app.session.context_usage()):
        say(line)
    for line in sandbox_lines(app.settings):  # issue 24
        say(line)



def session_line(index: int, info: dict[str, Any]) -> str:
    when = datetime.fromtimestamp(info["last_activity"] / 1000).strftime("%Y-%m-%d %H:%M")
    title = info.get("title") or "（无标题）"
    mark = f" · ⏸️ {info['unfinished']} 运行未完成" if info.get("unfinished") else ""
    return (f"  {index:>2}. {info['id']}  {when} · {info['messages']} 条消息 · {info.get('mode') or DEFAULT_MODE}{mark}"
            f" · {title}")


async def resume(app: App, payload: str, say: Output) -> None:
    sessions = app.session.sessions()
    if payload:
        target = next((s for s in sessions if s["id"] == payload), None)
        if target is None:
            say.fail(f"📭 未找到会话: {payload}")
            return
        await _switch(target, app, say)
        return
    if not sessions:
        say("📭 还没有保存的会话。")
        return
    from paicli.run.comeback import unfinished_mode

    shown = [{**info, "unfinished": unfinished_mode(app.session.checkpointer, info["id"])}
             for info in sessions[:RESUME_LIST_LIMIT]]
    say("📚 最近的会话：")
    for i, info in enumerate(shown, 1):
        say(session_line(i, info))
    if say.read_line is None:
        say("   用 paicli --session <id> 继续其中一个会话。")
        return
    choice = (await say.read_line("选择要继续的会话编号或 id（回车取消）：") or "").strip()
    target = _pick(choice, shown, sessions)
    if target is None:
        if choice:
            say.fail(f"📭 未找到会话: {choice}")
        else:
            say("已取消。")
        return
    await _switch(target, app, say)


def _pick(choice: str, shown: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> dict[str, Any] | None:
    if choice.isdigit() and 1 <= int(choice) <= len(shown):
        return shown[int(choice) - 1]
    return next((s for s in sessions if s["id"] == choice), None) if choice else None


async def _switch(target: dict[str, Any], app: App, say: Output) -> None:
    from paicli.memory.tokens import text_of  # the module loads LangChain's messages

    app.session.resume(target["id"])
    await app.session.load_external()
    messages = await app.session.messages()
    say(f"✅ 已恢复会话 {target['id']}（{len(messages)} 条消息）")
    unfinished = await app.session.unfinished_mode()
    if unfinished:  # Q11: a run cut short by a crash or kill -9 can be finished
        say(UNFINISHED.format(mode=unfinished))
    for message in messages[-2:]:
        who = {"human": "你", "ai": "助手"}.get(message.type)
        text = text_of(message).strip().replace("\n", " ")
        if who and text:
            say(f"   {who}: {text[:100]}{'…' if len(text) > 100 else ''}")
