"""``/snapshot [list|status|clean [N]]`` and ``/restore [N]`` (reference u.1; turn snapshots,
``paicli.tools.snapshots``).

``/restore`` shows what it will change and asks first. At the REPL it asks on the prompt; under
``paicli -p`` it asks on the terminal when stdin is one, and without a terminal it restores only
with ``--yes`` (otherwise it refuses, exit 1). The snapshots are the project's, whichever
session took them: ``/restore 1`` undoes the most recent run in this project, or the last
restore.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Awaitable, Callable

from paicli.tools.snapshots.report import change_lines
from paicli.tools.snapshots.store import (
    RESTORE_MODE,
    Label,
    ProjectSnapshots,
    SnapshotError,
    TurnSnapshots,
    describe,
    size_text,
    snapshot_home,
)

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output

ReadLine = Callable[[str], Awaitable[str | None]]
LISTED = 20  # snapshots /snapshot list shows
SNAPSHOT_USAGE = "用法：/snapshot [list|status|clean [保留个数]]"
RESTORE_USAGE = "用法：/restore [N]（N 是 /snapshot list 中的编号，默认 1 = 最近一次运行之前）"
CONFIRM = "确认恢复？输入 y 确认，其他输入取消："


def project_snapshots(app: App) -> ProjectSnapshots:
    s = app.settings
    return TurnSnapshots(snapshot_home(s.home), s.snapshots).project(s.project_root)


async def snapshot(app: App, payload: str, say: Output) -> None:
    verb, _, rest = payload.partition(" ")
    verb, rest = verb.lower() or "list", rest.strip()
    store = project_snapshots(app)
    try:
        if verb == "list" and not rest:
            await _list(store, say)
        elif verb == "status" and not rest:
            _status(store, say)
        elif verb == "clean":
            keep = _number(rest) if rest else app.settings.snapshots.keep
            if keep is None:
                say.fail(f"❌ 保留个数须是正整数：{rest[:40]}。{SNAPSHOT_USAGE}")
                return
            removed, freed = await asyncio.to_thread(store.clean, keep)
            say(f"🧹 已删除 {removed} 个较早的快照，保留最近 {keep} 个" + (f"，释放 {size_text(freed)}" if freed else ""))
        else:
            say.fail(f"❌ {SNAPSHOT_USAGE}")
    except SnapshotError as error:
        say.fail(f"❌ 快照操作失败: {error}")


async def _list(store: ProjectSnapshots, say: Output) -> None:
    rows, total, notices = await asyncio.to_thread(store.changed_since, LISTED)
    for line in notices:
        say(line)
    if not rows:
        say("📭 这个项目还没有快照：每次运行（ReAct、Plan、Team）开始前会自动保存一个。")
        return
    say(f"📸 快照（最近的在前，共 {total} 个；/restore N 恢复到第 N 个）：")
    for number, (entry, changed) in enumerate(rows, 1):
        since = "内容已不在仓库中" if changed is None else ("与当前相同" if changed == 0 else f"此后改动 {changed} 个文件")
        kind = "恢复前" if entry.mode == RESTORE_MODE else "运行前"
        session = f" · 会话 {entry.session[:8]}" if entry.session else ""
        left = f" · {len(entry.left_out)} 个文件未收录" if entry.left_out else ""
        say(f"  {number:>2}. {describe(entry)}{session} · {kind} · {since}{left}")
    if total > len(rows):
        say(f"   …另有 {total - len(rows)} 个更早的快照（/snapshot clean 只保留最近的）")


def _status(store: ProjectSnapshots, say: Output) -> None:
    status = store.status()
    o = status.options
    say(f"📸 快照仓库: {status.directory}")
    say(f"   快照 {status.count} 个（不同内容 {status.trees} 份），占用 {size_text(status.bytes)}")
    say(f"   上限: 单个文件 {size_text(o.max_file_bytes)}（PAICLI_SNAPSHOT_MAX_FILE_MB），"
        f"单个快照新增内容 {size_text(o.max_snapshot_bytes)}（PAICLI_SNAPSHOT_MAX_MB）；超出的文件不收录")
    say(f"   /snapshot clean 保留最近 {o.keep} 个（PAICLI_SNAPSHOT_KEEP）")


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() and int(text) >= 1 else None


async def restore(app: App, payload: str, say: Output) -> None:
    number = _number(payload) if payload else 1
    if number is None:
        say.fail(f"❌ {RESTORE_USAGE}")
        return
    store = project_snapshots(app)
    try:
        plan = await asyncio.to_thread(store.preview, number)
    except SnapshotError as error:
        say.fail(f"❌ 恢复快照失败: {error}")
        return
    for line in plan.notices:
        say(line)
    if not plan.changes.count:
        say(f"✅ 工作区与快照 {number}（{describe(plan.target)}）相同，没有需要恢复的文件")
        return
    for line in change_lines(plan, done=False):
        say(line)
    if not await _confirmed(app, say, say.read_line):
        return
    label = Label.of(RESTORE_MODE, f"/restore {number}", app.session_id)
    try:
        done = await asyncio.to_thread(store.restore, number, label)
    except SnapshotError as error:
        say.fail(f"❌ 恢复快照失败: {error}")
        return
    for line in [*done.notices, *change_lines(done, done=True, paths=False)]:
        say(line)
    say("   恢复前的工作区已保存为快照 1：再输入 /restore 1 可撤销这次恢复")


async def _confirmed(app: App, say: Output, read_line: ReadLine | None) -> bool:
    if read_line is None and getattr(app.args, "yes", False):
        say("   --yes：不再询问，直接恢复")
        return True
    if read_line is None:  # `paicli -p`: the terminal, if stdin is one
        from paicli.ui.terminal import read_stdin_line

        read_line = read_stdin_line
    answer = await read_line(CONFIRM)
    if answer is None:
        say.fail("❌ 没有可以确认的终端，未恢复；在脚本里请加 --yes")
        return False
    if answer.strip().lower() not in ("y", "yes"):
        say("已取消，工作区没有改动。")
        return False
    return True
