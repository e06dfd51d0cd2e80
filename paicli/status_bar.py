"""The status bar under the REPL's prompt (reference u.4), a prompt_toolkit bottom toolbar.

It is drawn only while the prompt waits for input: streamed answers and approval questions are
printed with no toolbar on screen, so it never draws over them. Its figures are taken after each
turn (and after each command): the model, the next request's estimate against the window, the
last turn's input/output/cached tokens, its estimated cost (``paicli.prices``; a model without a
price shows none), the approval level, the turn's time, the session mode, MCP servers ready/total
and skills enabled/total. ``PAICLI_STATUS_BAR=off`` hides it. Reference u.4's ``phase`` is left
out: drawn only at the prompt, the bar could only ever say ``idle``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paicli.context_view import tokens
from paicli.terminal import visible

if TYPE_CHECKING:
    from paicli.app import App

LEVELS = {"auto": "HITL default", "ask": "HITL on", "yes": "HITL --yes"}


@dataclass
class TurnFigures:
    input: int = 0
    output: int = 0
    cached: int = 0
    seconds: float = 0.0


def cost_text(cost: float | None) -> str | None:
    if cost is None:
        return None
    return f"¥{cost:.2f}" if cost >= 1 else f"¥{cost:.4f}"


class StatusBar:
    def __init__(self, app: App):
        self.app = app
        self.turn = TurnFigures()
        self.context_tokens: int | None = None  # None until a turn has run: the estimate needs the session
        self.skills = "Skill -"  # scanning the skill folders takes a moment: done off the first prompt's path

    async def after_turn(self, result: Any | None) -> None:
        """Take the figures of a finished turn (``TurnResult``; a Plan or Team run has none).
        With the bar off (PAICLI_STATUS_BAR=off) nothing is read: no estimate over the history."""
        if not self.app.settings.status_bar:
            return
        if result is not None:
            self.turn = TurnFigures(result.input_tokens, result.output_tokens, result.cached_tokens, result.seconds)
        if self.app.started:
            try:
                self.context_tokens = await self.app.session.next_request_tokens()
            except Exception:  # noqa: BLE001 - a status figure must never break the REPL
                self.context_tokens = None
        self.count_skills()

    def count_skills(self) -> None:
        listing = self.app.skills.listing(self.app.settings.project_root)
        self.skills = f"Skill {sum(1 for s in listing if s.usable)}/{len(listing)}" if listing else "Skill 0"

    def _mcp(self) -> str:
        return self.app.mcp.status_label() if self.app.settings.mcp.servers else "MCP 0"

    def text(self) -> str:
        s, t = self.app.settings, self.turn
        price = s.price()
        context = tokens(self.context_tokens) if self.context_tokens is not None else "-"
        parts = [s.model, f"上下文 {context}/{tokens(s.context_window)}",
                 f"本轮 输入 {t.input} 输出 {t.output} 缓存 {t.cached}"]
        cost = cost_text(price.cost(t.input, t.output, t.cached) if price else None)
        parts += [cost] if cost else []
        parts += [LEVELS.get(self.app.approval, self.app.approval), f"{t.seconds:.1f}s",
                  f"模式 {self.app.session_mode}", self._mcp(), self.skills]
        return visible(" · ".join(parts)).replace("\n", " ")
