"""The model's reasoning as a person sees it (issue 39; reference s.2, s.4, s.5): dimmed, under a
``🧠`` label per role (``思考过程`` for the conversation, ``规划思考`` for a planner, ``任务思考 [id]`` for
a Plan task, ``执行思考`` / ``审查思考`` for a Team worker or reviewer).

``PAICLI_SHOW_THINKING`` picks how: ``off`` shows nothing; ``on`` streams every character as it
arrives; ``folded`` (the default) shows the newest line on the spinner while it arrives (on a
terminal) and leaves the first lines and a count once it ends. Reasoning is model output: it is
printed through ``SafeConsole`` like every other outside text, so it cannot carry control
sequences. ``paicli -p`` shows it on stderr with ``--verbose`` only, never on stdout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

MODES = ("off", "on", "folded")
FOLDED_LINES = 3  # lines a folded block keeps
LINE_CHARS = 160  # characters a kept line keeps
CONVERSATION = "思考过程"  # reference s.2: `🧠 思考过程`
LABELS = {"planner": "规划思考", "plan": "任务思考", "team-planner": "规划思考", "team-worker": "执行思考",
          "team-reviewer": "审查思考"}  # reference s.4, s.5


def label_for(role: str, unit: str | None = None) -> str:
    label = LABELS.get(role, CONVERSATION)
    return f"{label} [{unit}]" if unit else label


class ThinkingView:
    """One console's reasoning blocks. ``feed`` a block's pieces as they stream, ``close`` when the
    answer (or a tool call, a notice, a question) comes; ``spinner`` updates the live status line."""

    def __init__(self, console: Any, mode: str = "folded", spinner: Callable[[Text], bool] = lambda _t: False):
        self.console, self.mode, self.spinner = console, mode, spinner
        self.label: str | None = None
        self.text = ""

    def feed(self, piece: str, label: str = CONVERSATION) -> None:
        if self.mode == "off" or not piece:
            return
        if label != self.label:
            self.close()
            self.label = label
            if self.mode == "on":
                self.console.print(f"🧠 {label}", style="dim")
        self.text += piece
        if self.mode == "on":
            self.console.print(piece, end="", style="dim italic")
        else:
            tail = " ".join(self.text[-LINE_CHARS:].split())[-80:]
            self.spinner(Text(f"🧠 {label}: {tail}", style="dim"))

    def block(self, text: str, label: str) -> None:
        """A whole block at once (a unit's message, an answer that was not streamed)."""
        self.feed(text, label)
        self.close()

    def close(self) -> None:
        if self.label is None:
            return
        label, text = self.label, self.text
        self.label, self.text = None, ""
        if self.mode == "on":
            self.console.print()
            return
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        self.console.print(f"🧠 {label}（已折叠，{len(text)} 字）", style="dim")
        for line in lines[:FOLDED_LINES]:
            self.console.print(f"  │ {line[:LINE_CHARS]}{'…' if len(line) > LINE_CHARS else ''}", style="dim italic")
        if len(lines) > FOLDED_LINES:
            self.console.print(f"  │ …（另有 {len(lines) - FOLDED_LINES} 行；PAICLI_SHOW_THINKING=on 可全部展开）",
                               style="dim")
