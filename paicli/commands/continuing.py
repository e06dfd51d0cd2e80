"""``/continue`` (reference s.4, Q11): finish the session's run that was cut short, or (issue 41)
the one the start-up line named: the project's newest session, when this session has none.

At the REPL that other session's run is offered (a ``y`` switches to it, as ``/resume`` would,
and finishes it); ``paicli -p /continue`` has nobody to ask and says the command that does it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from paicli.commands.spec import CommandResult

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output, ReadLine

NONE_HERE = "当前会话没有未完成的运行。"
ELSEWHERE = "当前会话没有未完成的运行；这个项目最近的会话 {sid} 有未完成的 {mode} 运行"
OFFER = ELSEWHERE + "。切换到该会话并继续？输入 y 确认，其他输入取消："
HOW = ELSEWHERE + "：paicli --session {sid} --continue"
SWITCHED = "✅ 已切换到会话 {sid}，继续它的 {mode} 运行"


async def continue_run(app: App, payload: str, say: Output) -> CommandResult | None:
    """``/continue``: the run to finish, as ``CommandResult(run=(mode, None))``; None when there is
    none (said why)."""
    run = await _unfinished(app, say, say.read_line)
    return None if run is None else CommandResult(run=run)


async def _unfinished(app: App, say: Output, read_line: ReadLine | None) -> tuple[str, None] | None:
    mode = await app.session.unfinished_mode()
    if mode is not None:
        return mode, None
    other = await asyncio.to_thread(newest_unfinished, app)
    if other is None:
        say(NONE_HERE)
        return None
    sid, mode = other
    if read_line is None:
        say(HOW.format(sid=sid, mode=mode))
        return None
    if ((await read_line(OFFER.format(sid=sid, mode=mode))) or "").strip().lower() not in ("y", "yes"):
        say("已取消。")
        return None
    app.session.resume(sid)
    await app.session.load_external()
    say(SWITCHED.format(sid=sid, mode=mode))
    return mode, None


def newest_unfinished(app: App) -> tuple[str, str] | None:
    """The project's newest session and its unfinished run's mode, when it is another session."""
    from paicli.run.comeback import has_ledger, newest_session, unfinished_mode

    sid = newest_session(app.settings.home, app.settings.project_root)
    if sid is None or sid == app.session_id:
        return None
    saver = app.session.checkpointer
    # PAICLI_DATABASE_URL: the database's sessions; else the ledger files
    known = saver.has_session(sid) if hasattr(saver, "has_session") else has_ledger(app.settings.home / "history" / "raw", sid)
    mode = unfinished_mode(saver, sid) if known else None
    return (sid, mode) if mode else None
