"""``/mode`` and ``/hitl`` (reference s.1 item 9, v.1): the session mode and the approval level;
``/cancel`` and ESC at the prompt, which drop a pending ``/plan`` or ``/team`` (s.1 item 8)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paicli.run.session_modes import (
    HITL_HINTS,
    HITL_WORDS,
    LEVEL_LABELS,
    SESSION_MODES,
    UNKNOWN_HITL,
    UNKNOWN_MODE,
    mode_lines,
    switched,
)

if TYPE_CHECKING:
    from paicli.app import App
    from paicli.commands.output import Output


NOTHING_RUNNING = "当前没有正在运行的任务。"


def drop_pending(app: App, say: Any) -> bool:
    """Forget a pending ``/plan`` or ``/team`` and say so; False when none was pending."""
    from paicli.modes import MODE_SPECS

    if app.next_mode is None:
        return False
    spec, app.next_mode = MODE_SPECS[app.next_mode], None
    say(spec.dropped)
    return True


def cancel(app: App, payload: str, say: Any) -> None:
    """``/cancel`` (or ``cancel``) at the prompt: a run is cancelled with Ctrl-C or ESC, so here it
    drops a pending ``/plan`` or ``/team``, or says there is nothing to cancel."""
    if not drop_pending(app, say):
        say(NOTHING_RUNNING)


async def mode(app: App, payload: str, say: Output) -> None:
    if not payload:
        for line in mode_lines(app.session_mode):
            say(line)
        return
    wanted = payload.lower()
    if wanted not in SESSION_MODES:
        say.fail(UNKNOWN_MODE.format(mode=payload))
        return
    await app.set_mode(wanted)
    say(switched(wanted))


async def hitl(app: App, payload: str, say: Output) -> None:
    if not payload:
        say(f"🔒 HITL 当前档位：{LEVEL_LABELS[app.approval]}")
        for line in HITL_HINTS:
            say(line)
        return
    level = HITL_WORDS.get(payload.lower())
    if level is None:
        say.fail(UNKNOWN_HITL.format(arg=payload))
        return
    await app.set_approval(level)
    # the mode follows the level it names, so the two never disagree (a plan mode keeps planning)
    if app.session_mode != "plan":
        app.session_mode = "ask" if level == "ask" else "auto"
    say(f"🔒 HITL 已切换到：{LEVEL_LABELS[level]}")
