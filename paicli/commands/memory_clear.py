"""``/memory clear [--global] [--yes]`` (issue 35): remove what ``/memory list`` shows here, after a question.

It removes this project's memories, and the global ones too only with ``--global``; never another
project's, and in a database never another user's (``LongTermMemory.clearable``). It first says
how many of each scope go and asks ``y/N``; it removes exactly the memories it counted (one
written meanwhile stays). At the REPL it asks on the prompt; under ``paicli -p`` on the terminal
when stdin is one; without a terminal it clears only with ``--yes`` (``/memory clear --yes`` or
``paicli -p "/memory clear" --yes``), and otherwise refuses with one line (exit 1), as
``/restore`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paicli.memory.longterm.entry import SCOPE_GLOBAL

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output, ReadLine

CLEAR_FLAGS = ("--global", "--yes")
CLEAR_USAGE = "❌ 用法: /memory clear [--global] [--yes]（默认只清空当前项目的记忆；--global 连全局记忆一起清空）"
NOTHING = "📭 当前项目没有可清空的长期记忆{rest}。"
QUESTION = "确认清空？输入 y 确认，其他输入取消："
NO_TERMINAL = "❌ 没有可以确认的终端，长期记忆未清空；在脚本里请加 --yes"
CANCELLED = "已取消，长期记忆没有改动。"


def parse_clear(payload: str) -> tuple[bool, bool] | None:
    """``(include_global, yes)``, or None for anything else."""
    words = payload.lower().split()
    if any(w not in CLEAR_FLAGS for w in words):
        return None
    return "--global" in words, "--yes" in words


def counts(project: int, global_: int, include_global: bool) -> str:
    """``当前项目的 3 条项目记忆和 2 条全局记忆``."""
    text = f"当前项目的 {project} 条项目记忆"
    return text + (f"和 {global_} 条全局记忆" if include_global else "")


async def clear(payload: str, app: App, say: Output, read_line: ReadLine | None) -> None:
    parsed = parse_clear(payload)
    if parsed is None:
        say.fail(CLEAR_USAGE)
        return
    include_global, yes = parsed
    yes = yes or (read_line is None and bool(getattr(app.args, "yes", False)))
    memory = app.memory
    shown = memory.clearable(app.project_key, include_global)
    project = sum(1 for e in shown if e.scope != SCOPE_GLOBAL)
    what = counts(project, len(shown) - project, include_global)
    kept = 0 if include_global else sum(1 for e in memory.visible(app.project_key) if e.scope == SCOPE_GLOBAL)
    kept_note = f"，全局记忆 {kept} 条保留（加 --global 一并清空）" if kept else ""
    if not shown:
        say(NOTHING.format(rest=f"（全局记忆 {kept} 条未动，加 --global 一并清空）" if kept else ""))
        return
    ask = read_line if read_line is not None else _terminal()
    if not yes and ask is None:  # a script: one line, nothing changed
        say.fail(f"{NO_TERMINAL}（将删除{what}）")
        return
    say(f"🧹 将删除{what}；其他项目的记忆不受影响{kept_note}")
    if yes:
        say("   --yes：不再询问，直接清空")
    elif ((await ask(QUESTION)) or "").strip().lower() not in ("y", "yes"):  # Ctrl-D, Enter, n...: no
        say(CANCELLED)
        return
    gone = memory.clear(shown)
    removed = sum(1 for e in gone if e.scope != SCOPE_GLOBAL)
    say(f"🧹 长期记忆已清空：{counts(removed, len(gone) - removed, include_global)}")


def _terminal() -> ReadLine | None:
    """``paicli -p``: the terminal's line, when stdin is one."""
    import sys

    from paicli.ui.terminal import read_stdin_line

    return read_stdin_line if sys.stdin is not None and sys.stdin.isatty() else None
