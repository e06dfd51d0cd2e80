"""The status bar under the REPL's prompt (reference u.4), a prompt_toolkit bottom toolbar.

It is drawn only while the prompt waits for input: streamed answers and approval questions are
printed with no toolbar on screen, so it never draws over them. Its figures are taken after each
turn (and after each command): the model, the next request's estimate against the window, the
last turn's input/output/cached tokens, its estimated cost (``paicli.config.prices``; a model without a
price shows none), the approval level, the turn's time, the session mode, MCP servers ready/total
and skills enabled/total. ``PAICLI_STATUS_BAR=off`` hides it. Reference u.4's ``phase`` is left
out: drawn only at the prompt, the bar could only ever say ``idle``.

Issue 41: the figures are those of the last run in any mode (its ``paicli.run.result.RunResult``,
whichever mode returned it, ``--continue`` and ``/continue`` included), and a bar wider than the
terminal drops its fields by :data:`PRIORITY` (mode and context stay longest) and ends in ``…``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len

from paicli.run.result import RunResult
from paicli.ui.context_view import tokens
from paicli.ui.terminal import cells_fit, visible

if TYPE_CHECKING:
    from paicli.app import App

LEVELS = {"auto": "HITL default", "ask": "HITL on", "yes": "HITL --yes"}
# Which fields stay when the bar does not fit, first to last (issue 41); shown in the order of u.4.
PRIORITY = ("mode", "context", "level", "model", "turn", "cost", "seconds", "mcp", "skills")
SEPARATOR, MORE = " · ", "…"


def cost_text(cost: float | None) -> str | None:
    if cost is None:
        return None
    return f"¥{cost:.2f}" if cost >= 1 else f"¥{cost:.4f}"


class StatusBar:
    def __init__(self, app: App):
        self.app = app
        self.last = RunResult()  # the last run's figures: none before the first
        self.context_tokens: int | None = None  # None until a turn has run: the estimate needs the session
        self.skills = "Skill -"  # scanning the skill folders takes a moment: done off the first prompt's path

    async def after_turn(self, result: RunResult | None) -> None:
        """Take the figures of a finished run in any mode (None: a command, or a cancelled run,
        keeps the last figures). With the bar off (PAICLI_STATUS_BAR=off) nothing is read: no
        estimate over the history."""
        if not self.app.settings.status_bar:
            return
        if result is not None:
            self.last = result
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

    def fields(self) -> dict[str, str]:
        s, t = self.app.settings, self.last.usage
        price = s.price()
        context = tokens(self.context_tokens) if self.context_tokens is not None else "-"
        cost = cost_text(price.cost(t.input, t.output, t.cached) if price else None)
        shown = {"model": s.model, "context": f"上下文 {context}/{tokens(s.context_window)}",
                 "turn": f"本轮 输入 {t.input} 输出 {t.output} 缓存 {t.cached}", "cost": cost,
                 "level": LEVELS.get(self.app.approval, self.app.approval), "seconds": f"{self.last.seconds:.1f}s",
                 "mode": f"模式 {self.app.session_mode}", "mcp": self._mcp(), "skills": self.skills}
        return {name: visible(text).replace("\n", " ") for name, text in shown.items() if text}

    def text(self, width: int | None = None) -> str:
        """The bar in at most ``width`` cells (None: whole)."""
        return fit(self.fields(), width)

    def toolbar(self) -> str:
        """prompt_toolkit's bottom toolbar: the bar for the terminal's width now (the last
        column left free, so the terminal never wraps it)."""
        from prompt_toolkit.application import get_app_or_none

        app = get_app_or_none()
        return self.text(app.output.get_size().columns - 1 if app is not None else None)


def fit(fields: dict[str, str], width: int | None) -> str:
    """The fields in their order, joined. When they do not fit in ``width`` cells, fields are
    taken by :data:`PRIORITY` while they fit, ``…`` saying that some were left out; a first field
    that alone does not fit is cut, with ``…``."""
    whole = SEPARATOR.join(fields.values())
    if width is None or cell_len(whole) <= width:
        return whole
    kept: list[str] = []
    ranked = sorted(fields, key=lambda n: PRIORITY.index(n) if n in PRIORITY else len(PRIORITY))
    for name in ranked:
        if cell_len(_joined(fields, [*kept, name])) <= width:
            kept.append(name)
    return _joined(fields, kept) if kept else _cut(fields[ranked[0]], width)


def _joined(fields: dict[str, str], kept: list[str]) -> str:
    return SEPARATOR.join([*(text for name, text in fields.items() if name in kept), MORE])


def _cut(text: str, width: int) -> str:
    return text[:cells_fit(text, width - 1)] + MORE  # MORE even when it fits: the other fields were left out
