"""The plan review in the terminal (reference s.4 "Plan review"), in the reference's line mode:
the summary and the keys, then ``操作/补充> ``. Enter (or y / run) executes, ``cancel`` / ``esc``
cancels, ``/view`` shows the full plan, any other text re-plans with it as a supplement. Closed
input cancels: nothing runs that nobody approved."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

PROMPT = "操作/补充> "
VIEW = "/view"
EXPANDED = "👆 已展开完整计划，继续按 Enter / Ctrl+O / ESC / I。"


async def ask_review(request: dict[str, Any], read_line: Callable[[str], Awaitable[str | None]] | None,
                     say: Callable[[str], None]) -> str:
    for line in str(request.get("summary") or "").splitlines():
        say(line)
    while True:
        raw = await read_line(PROMPT) if read_line is not None else None
        if raw is None:
            return "cancel"
        if raw.strip().lower() == VIEW:
            for line in str(request.get("plan") or "").splitlines():
                say(line)
            say(EXPANDED)
            continue
        return raw.rstrip("\n")
