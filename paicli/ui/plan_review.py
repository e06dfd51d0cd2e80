"""The plan review in the terminal (reference s.4 "Plan review"; issue 26): the task table,
the keys, then ``操作/补充> ``. The request is data (``paicli.nodes.plan.review.plan_review_request``); this
module draws it. Every key the hint lists does what it says:

- Enter on an empty line (or ``y`` / ``run``) executes;
- Ctrl+O (or ``/view``) shows every task's full description and asks again;
- ESC (or ``cancel`` / ``esc``) cancels;
- any other text, then Enter, re-plans with it as the supplement (``i`` alone still asks for it
  on a line of its own).

The keys are bound by the REPL's review prompt (``KEYS``: key name → the line it stands for), so
a terminal without them still has the typed forms. Closed input cancels: nothing runs that nobody
approved."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from rich.cells import cell_len

from paicli.ui.terminal import cut_cells

PROMPT = "操作/补充> "
SUPPLEMENT_PROMPT = "补充要求> "
VIEW = "/view"
KEYS = {"c-o": VIEW, "escape": "cancel"}  # prompt_toolkit key names; Enter is an empty line
HINT = "   Enter 执行 · Ctrl+O 展开完整描述 · ESC 取消 · 输入补充要求后按 Enter 重新规划"
EXPANDED = "👆 已展开完整计划。"
DESCRIPTION_CELLS = 60  # the table's description column at most; Ctrl+O shows them whole
MIN_DESCRIPTION_CELLS = 16  # on a narrow terminal, still this much
WIDTHS = (6, 11, 15, 20)  # at most, cells of the wave (批次), id, type and dependencies columns
HEADERS = ("批次", "任务", "类型", "依赖")
INDENT = "   "
TITLE_CELLS = 80


def _pad(text: str, cells: int) -> str:
    """Left-aligned in ``cells`` terminal cells (a Chinese character takes two), cut to fit."""
    text = _cut(text, cells - 1)
    return text + " " * (cells - cell_len(text))


def _cut(text: str, limit: int | None) -> str:
    """On one line, at most ``limit`` terminal cells, ``…`` included (issue 41: cells, not characters)."""
    flat = " ".join(str(text).split())
    return flat if limit is None else cut_cells(flat, limit)


def table(request: dict[str, Any], limit: int | None = DESCRIPTION_CELLS, width: int | None = None) -> list[str]:
    """The plan as rows; ``limit`` cells of each description (None: whole), and no row wider
    than ``width`` cells (the terminal's, when known)."""
    tasks = [t for t in request.get("tasks") or [] if isinstance(t, dict)]
    waves = max((t.get("batch") or 0 for t in tasks), default=0)
    counts = f"（{len(tasks)} 个任务，{waves} 个批次）"
    room = TITLE_CELLS if width is None else max(MIN_DESCRIPTION_CELLS, width - 1 - cell_len("📝 计划已生成：" + counts))
    title = _cut(request.get("summary") or request.get("goal") or "", min(room, TITLE_CELLS))
    rows = [(str(t.get("batch") or "?"), str(t.get("id")), str(t.get("type")),
             ", ".join(str(d) for d in t.get("dependencies") or []) or "无") for t in tasks]
    # each column as wide as its widest cell and two, at most WIDTHS: the description gets the rest
    widths = [min(most, 2 + max(cell_len(h), *(cell_len(" ".join(r[i].split())) for r in rows)) if rows else most)
              for i, (h, most) in enumerate(zip(HEADERS, WIDTHS))]
    lines = [f"📝 计划已生成：{title}{counts}", INDENT + "".join(_pad(h, w) for h, w in zip(HEADERS, widths)) + "描述"]
    if limit is not None and width is not None:
        limit = max(MIN_DESCRIPTION_CELLS, min(limit, width - 1 - cell_len(INDENT) - sum(widths)))
    for t, row in zip(tasks, rows):
        lines.append(INDENT + "".join(_pad(c, w) for c, w in zip(row, widths)) + _cut(t.get("description") or "", limit))
    return lines


async def ask_plan_review(request: dict[str, Any], read_line: Callable[[str], Awaitable[str | None]] | None,
                     say: Callable[[str], None], width: int | None = None) -> str:
    """``width``: the terminal's columns, so no row of the table wraps."""
    for line in [*table(request, width=width), HINT]:
        say(line)
    while True:
        raw = await read_line(PROMPT) if read_line is not None else None
        if raw is None:
            return "cancel"
        if raw.strip().lower() == VIEW:
            for line in [*table(request, None), EXPANDED, HINT]:
                say(line)
            continue
        if raw.strip().lower() == "i":
            supplement = await read_line(SUPPLEMENT_PROMPT)
            if not (supplement or "").strip():
                continue  # nothing to add: back to the question
            return supplement.rstrip("\n")
        return raw.rstrip("\n")
