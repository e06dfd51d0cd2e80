"""Slash commands (reference u.1), shared by the REPL and ``-p "/..."``.

Command words are case-insensitive; the payload is what follows, trimmed. Unknown ``/x``
prints ``❌ 未知命令`` and the list of what exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

HELP = [
    ("/help", "显示可用命令"),
    ("/model [名称]", "查看当前模型；带名称时切换模型"),
    ("/exit", "退出 paicli（也可以输入 exit / quit，或连按两次 Ctrl-C）"),
]
EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}
NAMES = ["/help", "/model", "/exit", "/quit"]  # for completion


@dataclass
class Outcome:
    exit: bool = False
    handled: bool = True


def is_command(text: str) -> bool:
    t = text.strip().lower()
    return t.startswith("/") or t in EXIT_WORDS or t in ("cancel",)


def help_lines() -> list[str]:
    return ["可用命令："] + [f"   {display} - {text}" for display, text in HELP]


def handle(text: str, app: Any, say: Callable[[str], None]) -> Outcome:
    """``app`` offers ``settings`` and ``switch_model(name)``."""
    stripped = text.strip()
    word, _, payload = stripped.partition(" ")
    word, payload = word.lower(), payload.strip()
    if stripped.lower() in EXIT_WORDS:
        return Outcome(exit=True)
    if word in ("/cancel", "cancel"):
        say("当前没有正在运行的任务。")
    elif word == "/help":
        for line in help_lines():
            say(line)
    elif word == "/model":
        _model(payload, app, say)
    else:
        say(f"❌ 未知命令: {stripped}")
        for line in help_lines():
            say(line)
    return Outcome()


def _model(payload: str, app: Any, say: Callable[[str], None]) -> None:
    s = app.settings
    if not payload or payload.lower() in ("info", "list"):
        say(f"🤖 当前模型: {s.model} ({s.provider})")
        say(f"   endpoint: {s.base_url}   window: {s.context_window:,} tokens   light model: {s.light_model}")
        say("   /model <名称> 切换到同一服务上的其他模型")
        return
    app.switch_model(payload)
    say(f"✅ 已切换模型: {payload} ({s.provider})")
